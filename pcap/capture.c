/* pcap/capture.c — nanosecond pcap files through libpcap, stamped with
 * virtual time (docs/architecture.md, Records and captures).  libpcap writes the
 * file (magic a1b23c4d); nothing here knows the format. */
#include "capture.h"

#include <dlfcn.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/records.h"

#define CAPTURE_SNAPLEN 65535

/* libpcap is opened when a capture is first opened or read, not when a
 * program starts: Debian's libpcap brings libdbus, libsystemd, libgcrypt
 * and six more libraries, whose loading cost every mrcemu, nicd and
 * switchd 0.7 ms of CPU (measured with wait4, a program linked against
 * them against one that is not), a tenth of an 8-host sim's events, and
 * most runs write no pcap (docs/scale.md).  The soname is the one the
 * build found (Makefile, config.mk); the prototypes are libpcap's own. */
#ifndef MRC_PCAP_SONAME
#error "MRC_PCAP_SONAME: the Makefile names the libpcap it built against"
#endif
/* clang-format off */
#define PCAP_FUNCTIONS(F)                           \
	F(pcap_open_dead_with_tstamp_precision)     \
	F(pcap_open_offline_with_tstamp_precision)  \
	F(pcap_dump_fopen)                          \
	F(pcap_dump)                                \
	F(pcap_dump_file)                           \
	F(pcap_dump_close)                          \
	F(pcap_datalink)                            \
	F(pcap_next_ex)                             \
	F(pcap_geterr)                              \
	F(pcap_close)
/* clang-format on */

static struct {
#define PCAP_FIELD(f) __typeof__(f) *f;
	PCAP_FUNCTIONS(PCAP_FIELD)
#undef PCAP_FIELD
} libpcap;

/* Whether libpcap is loaded (loads it once, for path); err says what
 * failed. */
static bool libpcap_load(const char *path, char *err, size_t errlen)
{
	static void *lib;

	if (lib)
		return true;
	void *h = dlopen(MRC_PCAP_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "%s: cannot load libpcap: %s", path, dlerror());
		return false;
	}
#define PCAP_BIND(f)                                                                               \
	if (!(libpcap.f = (__typeof__(f) *)dlsym(h, #f))) {                                        \
		snprintf(err, errlen, "%s: %s has no %s", path, MRC_PCAP_SONAME, #f);              \
		dlclose(h);                                                                        \
		return false;                                                                      \
	}
	PCAP_FUNCTIONS(PCAP_BIND)
#undef PCAP_BIND
	lib = h;
	return true;
}

struct capture {
	pcap_t *pd;
	pcap_dumper_t *dumper;
	char path[4096];
};

struct capture *capture_open(const char *path, char *err, size_t errlen)
{
	struct capture *c = calloc(1, sizeof *c);

	if (!c) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	if (!libpcap_load(path, err, errlen)) {
		free(c);
		return NULL;
	}
	c->pd = libpcap.pcap_open_dead_with_tstamp_precision(DLT_EN10MB, CAPTURE_SNAPLEN,
							     PCAP_TSTAMP_PRECISION_NANO);
	if (!c->pd) {
		snprintf(err, errlen, "%s: libpcap cannot open a capture", path);
		free(c);
		return NULL;
	}
	snprintf(c->path, sizeof c->path, "%s", path);
	/* never through a planted link (records_create) */
	FILE *f = records_create(path);
	if (!f || !(c->dumper = libpcap.pcap_dump_fopen(c->pd, f))) {
		snprintf(err, errlen, "%s: %s", path,
			 f ? libpcap.pcap_geterr(c->pd) : strerror(errno));
		if (f)
			fclose(f);
		libpcap.pcap_close(c->pd);
		free(c);
		return NULL;
	}
	return c;
}

void capture_write(struct capture *c, ps_t t, const uint8_t *frame, size_t len)
{
	struct pcap_pkthdr h;
	uint64_t ns = t / PS_PER_NS;

	h.ts.tv_sec = (time_t)(ns / 1000000000ULL);
	/* with nanosecond precision libpcap reads tv_usec as nanoseconds */
	h.ts.tv_usec = (suseconds_t)(ns % 1000000000ULL);
	h.len = (bpf_u_int32)len;
	h.caplen = (bpf_u_int32)(len > CAPTURE_SNAPLEN ? CAPTURE_SNAPLEN : len);
	libpcap.pcap_dump((u_char *)c->dumper, &h, frame);
}

void capture_close(struct capture *c)
{
	if (!c)
		return;
	FILE *f = libpcap.pcap_dump_file(c->dumper);
	if (fflush(f) || ferror(f))
		fprintf(stderr, "mrcemu: %s: writing failed: %s\n", c->path,
			strerror(errno ? errno : EIO));
	libpcap.pcap_dump_close(c->dumper);
	libpcap.pcap_close(c->pd);
	free(c);
}

long capture_read(const char *path, capture_read_fn fn, void *arg, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *h;
	const u_char *data;
	long n = 0;
	int rc;
	pcap_t *pd;

	if (!libpcap_load(path, err, errlen))
		return -1;
	pd =
	    libpcap.pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, ebuf);
	if (!pd) {
		snprintf(err, errlen, "%s", ebuf);
		return -1;
	}
	if (libpcap.pcap_datalink(pd) != DLT_EN10MB) {
		snprintf(err, errlen, "%s: not an Ethernet capture (link type %d)", path,
			 libpcap.pcap_datalink(pd));
		libpcap.pcap_close(pd);
		return -1;
	}
	while ((rc = libpcap.pcap_next_ex(pd, &h, &data)) == 1) {
		ps_t ns = (ps_t)h->ts.tv_sec * 1000000000ULL + (ps_t)h->ts.tv_usec;
		fn(arg, ns * PS_PER_NS, data, h->caplen);
		n++;
	}
	if (rc == PCAP_ERROR) {
		snprintf(err, errlen, "%s: %s", path, libpcap.pcap_geterr(pd));
		n = -1;
	}
	libpcap.pcap_close(pd);
	return n;
}
