# mrcemu — one entry point: all, test, check, demo, bench, clean, install,
# uninstall.
# Objects and binaries go under $(BUILD); `make check` rebuilds everything
# under build/asan with AddressSanitizer and UndefinedBehaviorSanitizer.

# make DPDK=1: the optional DPDK port (dpdk:DEVARGS), in its own build folder.
DPDK     ?=
BUILD    ?= build$(if $(filter 1,$(DPDK)),/dpdk)
PREFIX   ?= /usr/local
VERSION  := $(shell cat VERSION)
CC       ?= cc
SANITIZE ?=
# Link-time optimization: the per-hop calls between modules (event queue,
# wire lengths, hash maps) are inlined across files; records are unchanged
# (no floating-point contraction under -std=c11).  leaf-spine-8 sim:
# about 8% fewer instructions.
CFLAGS   ?= -O2 -g -flto=auto
# `override` keeps these when CFLAGS comes from the command line (make check).
override CFLAGS += -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -MMD -MP $(SANITIZE)
override LDFLAGS += $(SANITIZE)

# The libraries we use (docs/architecture.md, Dependencies).  libev has no
# pkg-config file.  Nothing is probed or installed while the Makefile is read:
# $(BUILD)/deps.stamp runs `scripts/install-deps --check` and installs only
# when that probe fails, and $(BUILD)/config.mk records the compiler and linker
# flags pkg-config gives once the packages are there.  make builds an included
# makefile before anything else and then reads it, so a fresh Debian machine
# still needs only `make test`; `make deps` installs explicitly.
.DEFAULT_GOAL := all
PKGS := libpcap inih cmocka libprotobuf-c
DEPS_ENV := DPDK=$(DPDK)
$(BUILD)/deps.stamp: scripts/install-deps
	@mkdir -p $(dir $@)
	$(Q)$(DEPS_ENV) ./scripts/install-deps --check || { \
		echo "mrcemu: installing missing dependencies with scripts/install-deps" >&2; \
		$(DEPS_ENV) ./scripts/install-deps; }
	@touch $@
# libinih, protobuf-c and libev are linked from their archives (Debian's
# -dev packages ship them): each shared library costs every process its
# loading, 0.4 ms of CPU for the two mrcemu needs (docs/architecture.md,
# Dependencies); only the C library is loaded at start.
# libpcap is not linked but opened when a pcap is first written or read
# (pcap/capture.c says why): config.mk names the shared object to open, the
# soname of the libpcap.so the build would have linked.
PCAP_SONAME = $(shell objdump -p "$$(pkg-config --variable=libdir libpcap)/libpcap.so" \
	2>/dev/null | awk '$$1 == "SONAME" { print $$2 }')
$(BUILD)/config.mk: $(BUILD)/deps.stamp Makefile
	$(Q)[ -n "$(PCAP_SONAME)" ] || { echo "mrcemu: cannot read the soname of libpcap.so \
		(objdump -p on pkg-config's libdir for libpcap)" >&2; exit 1; }
	$(Q)$(if $(filter 1,$(DPDK)),pkg-config --exists libdpdk || { echo "mrcemu: DPDK=1 \
		needs libdpdk-dev (scripts/install-deps as root with DPDK=1 installs it)" >&2; exit 1; })
	$(Q)printf '%s\n' \
		'PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS)) -DMRC_PCAP_SONAME=\"$(PCAP_SONAME)\"' \
		'PKG_LIBS := -Wl,-Bstatic $(shell pkg-config --libs inih libprotobuf-c) -lev -Wl,-Bdynamic -lm' \
		'CMOCKA := $(shell pkg-config --libs cmocka)' \
		$(if $(filter 1,$(DPDK)),$(DPDK_MK)) >$@
DPDK_MK = 'DPDK_CFLAGS := -DMRC_DPDK $(patsubst -I%,-isystem %,$(shell pkg-config --cflags libdpdk))' \
	'PKG_LIBS += $(shell pkg-config --libs libdpdk)' \
	'$$(info mrcemu: DPDK port on (DPDK $(shell pkg-config --modversion libdpdk)), in $(BUILD))'
.PHONY: deps
deps:
	$(DEPS_ENV) ./scripts/install-deps
	@mkdir -p $(BUILD) && touch $(BUILD)/deps.stamp
# Goals that need no flags do not build config.mk (`make clean` probes nothing).
ifneq ($(filter-out clean deps uninstall check,$(or $(MAKECMDGOALS),all)),)
  -include $(BUILD)/config.mk
endif
override CFLAGS += $(PKG_CFLAGS)

# The Chakra schema (proto/chakra.proto), compiled by protoc-c into
# $(BUILD)/gen: generated code is built, never committed.
GEN      := $(BUILD)/gen
PROTO_H  := $(GEN)/chakra.pb-c.h
override CFLAGS += -I$(GEN)

# The DPDK port (emulator/daemon/port_dpdk.c) with Debian's libdpdk-dev, which
# install-deps adds when DPDK=1 asks for it (config.mk holds its flags).  Its
# headers are system headers (their warnings are not ours); only port_dpdk.c
# sees them.
ifneq ($(DPDK),1)
  ifeq ($(MAKE_RESTARTS),)
    $(info mrcemu: DPDK port off (make DPDK=1 builds it))
  endif
endif

# emulator/ holds one folder per layer (docs/architecture.md, Layout).  Code
# names a header of another folder by its path from emulator/ or from the top
# ("core/wire.h", "nicd/nic.h"); the core sees only itself, so a core file
# that includes an engine, a host or the launcher does not build.
INCLUDES := -iquote emulator -iquote .
$(BUILD)/obj/emulator/core/%.o: INCLUDES :=
# The programs' own files: the mrcemu command line (emulator/launch/mrcemu*.c)
# and the daemons' mains; everything else is the library.
CLI_SRCS := $(wildcard emulator/launch/mrcemu*.c)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
MAINS    := $(CLI_SRCS) nicd/main.c switchd/main.c
LIB_SRCS := $(filter-out $(MAINS),$(wildcard emulator/*/*.c nicd/*.c switchd/*.c pcap/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/chakra.pb-c.o
LIB      := $(BUILD)/libmrcemu.a

BINS     := $(BUILD)/mrcemu $(if $(wildcard nicd/main.c),$(BUILD)/nicd) \
            $(if $(wildcard switchd/main.c),$(BUILD)/switchd)
TEST_SRCS := $(wildcard tests/test_*.c)
TESTS     := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
TEST_HELPERS := $(wildcard tests/lib/*.c)
TEST_HELPER_OBJS := $(TEST_HELPERS:%.c=$(BUILD)/obj/%.o)
TOOLS_SRCS := $(wildcard tests/tools/*.c)
TOOLS     := $(TOOLS_SRCS:tests/tools/%.c=$(BUILD)/tests/%)
# The fuzz harnesses (tests/fuzz/fuzz_*.c) also build with a main() that
# replays a corpus and its mutations (tests/fuzz/replay.c), for `make test`.
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY := $(FUZZ_SRCS:tests/fuzz/fuzz_%.c=$(BUILD)/tests/fuzz-%-replay)
# `make fuzz`: each harness under libFuzzer and AFL++ for FUZZ_TIME seconds.
FUZZ_TIME ?= 15

# Quiet unless V=1: one line a file, and only when there is work.
Q := $(if $(V),,@)
.PHONY: all test check demo bench clean install uninstall fuzz
.SECONDARY: # keep test objects between builds
all: $(BINS) $(TESTS) $(TOOLS) $(FUZZ_REPLAY)

$(BUILD)/obj/emulator/daemon/port_dpdk.o: CFLAGS += $(DPDK_CFLAGS)

$(BUILD)/obj/%.o: %.c | $(PROTO_H)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -c $< -o $@

$(GEN)/chakra.pb-c.c $(PROTO_H) &: proto/chakra.proto
	@mkdir -p $(GEN)
	$(if $(Q),@echo "  PROTOC  $<")
	$(Q)protoc-c --c_out=$(GEN) -Iproto $<
$(BUILD)/obj/gen/chakra.pb-c.o: $(GEN)/chakra.pb-c.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	@rm -f $@
	$(Q)ar rcs $@ $^

# `mrcemu --version`: the VERSION file.
$(BUILD)/obj/emulator/launch/mrcemu.o: override CFLAGS += -DMRCEMU_VERSION='"$(VERSION)"'
$(BUILD)/obj/emulator/launch/mrcemu.o: VERSION

# Every program is linked again when config.mk's libraries change.
LINK_IN = $(filter-out %.mk,$^)
$(BINS) $(TESTS) $(TOOLS) $(FUZZ_REPLAY): $(BUILD)/config.mk

$(BUILD)/mrcemu: $(CLI_OBJS) $(LIB)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(LINK_IN) $(PKG_LIBS) -o $@
$(BUILD)/nicd: $(BUILD)/obj/nicd/main.o $(LIB)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(LINK_IN) $(PKG_LIBS) -o $@
$(BUILD)/switchd: $(BUILD)/obj/switchd/main.o $(LIB)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(LINK_IN) $(PKG_LIBS) -o $@

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_HELPER_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(LINK_IN) $(PKG_LIBS) $(CMOCKA) -o $@
$(BUILD)/tests/%: $(BUILD)/obj/tests/tools/%.o $(TEST_HELPER_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(LINK_IN) $(PKG_LIBS) -o $@

$(BUILD)/tests/fuzz-%-replay: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(BUILD)/obj/tests/fuzz/replay.o $(LIB)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(LINK_IN) $(PKG_LIBS) -o $@

# The suite: every cmocka binary, then every tests/*.sh, from the top folder.
test: all
	@BUILD=$(BUILD) tests/run-tests

check:
	$(MAKE) BUILD=build/asan SANITIZE="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		CFLAGS="-O1 -g -DMRCEMU_CHECK_INVARIANTS" test

fuzz: all
	@BUILD=$(BUILD) FUZZ_TIME=$(FUZZ_TIME) scripts/fuzz

demo: all
	@scripts/demo $(BUILD)

bench: all
	@scripts/bench $(BUILD)

# `make install PREFIX=/usr DESTDIR=/tmp/pkg`, laid out as Debian tools are:
# mrcemu in bin; the daemons in libexec/mrcemu (the launcher finds them
# there); topologies, workloads, mrc.lua and the Python tools in
# share/mrcemu (an installed mrcemu finds its default topology there); the
# dissector also where Wireshark loads global Lua plugins; man pages, bash
# completion and the documents.  `make uninstall` removes exactly these.
BINDIR     ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec/mrcemu
DATADIR    ?= $(PREFIX)/share/mrcemu
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/mrcemu
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# Asked of tshark only when installing; without it, beside the prefix.
WIRESHARK_PLUGINDIR ?= $(or $(shell tshark -G folders 2>/dev/null | \
	sed -n 's/^Global Lua Plugins:[[:space:]]*//p'),$(PREFIX)/lib/wireshark/plugins)
PYTOOLS  := scripts/mrcgen scripts/mrc_scapy.py scripts/gen-leafspine scripts/gen-fattree
MANPAGES := docs/man/mrcemu.1 docs/man/mrcemu-topology.5 docs/man/nicd.8 docs/man/switchd.8
DOCS     := $(filter-out docs/README.md,$(wildcard docs/*.md)) LICENSE README.md
# bin/NAME -> share/mrcemu/python/TOOL, relative so the tree can move.
PYREL     = $(shell realpath -m --relative-to=$(BINDIR) $(DATADIR))/python

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(DATADIR)/configs/workloads \
		$(DESTDIR)$(DATADIR)/python $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(DOCDIR) $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(WIRESHARK_PLUGINDIR)
	install -m 0755 $(BUILD)/mrcemu $(DESTDIR)$(BINDIR)/
	install -m 0755 $(BUILD)/nicd $(BUILD)/switchd $(DESTDIR)$(LIBEXECDIR)/
	install -m 0644 configs/*.ini $(DESTDIR)$(DATADIR)/configs/
	install -m 0644 configs/workloads/* $(DESTDIR)$(DATADIR)/configs/workloads/
	install -m 0644 pcap/mrc.lua $(DESTDIR)$(DATADIR)/
	install -m 0644 pcap/mrc.lua $(DESTDIR)$(WIRESHARK_PLUGINDIR)/
	install -m 0755 scripts/mrcgen scripts/gen-leafspine scripts/gen-fattree \
		$(DESTDIR)$(DATADIR)/python/
	install -m 0644 scripts/mrc_scapy.py $(DESTDIR)$(DATADIR)/python/
	install -m 0755 scripts/report $(DESTDIR)$(DATADIR)/report
	ln -sf $(PYREL)/mrcgen $(DESTDIR)$(BINDIR)/mrcgen
	ln -sf $(PYREL)/gen-leafspine $(DESTDIR)$(BINDIR)/mrcemu-gen-leafspine
	ln -sf $(PYREL)/gen-fattree $(DESTDIR)$(BINDIR)/mrcemu-gen-fattree
	install -m 0644 docs/man/mrcemu.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 docs/man/mrcemu-topology.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 docs/man/nicd.8 docs/man/switchd.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 scripts/mrcemu.bash-completion $(DESTDIR)$(BASHCOMPDIR)/mrcemu
	install -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/mrcemu $(DESTDIR)$(BINDIR)/mrcgen \
		$(DESTDIR)$(BINDIR)/mrcemu-gen-leafspine $(DESTDIR)$(BINDIR)/mrcemu-gen-fattree \
		$(DESTDIR)$(LIBEXECDIR)/nicd $(DESTDIR)$(LIBEXECDIR)/switchd \
		$(DESTDIR)$(WIRESHARK_PLUGINDIR)/mrc.lua \
		$(DESTDIR)$(MANDIR)/man1/mrcemu.1 $(DESTDIR)$(MANDIR)/man5/mrcemu-topology.5 \
		$(DESTDIR)$(MANDIR)/man8/nicd.8 $(DESTDIR)$(MANDIR)/man8/switchd.8 \
		$(DESTDIR)$(BASHCOMPDIR)/mrcemu
	rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR)
	-rmdir $(DESTDIR)$(LIBEXECDIR)

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
