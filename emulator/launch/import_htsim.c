/* emulator/launch/import_htsim.c — `mrcemu import htsim TOPO CM -o DIR`: a scenario
 * of UEC's htsim as an mrcemu topology and workload (import.h).
 *
 * htsim's two-tier `.topo` file gives the hosts (`Nodes`), the hosts of a
 * leaf (tier 0 `Radix_Down`), the leaf's uplinks, one to every spine
 * (`Radix_Up`), and each tier's downlink rate and latency; a connection
 * matrix gives `Nodes`, `Connections`, then one flow a line, `SRC->DST id
 * ID start T size BYTES` with T in picoseconds and host N the N-th NIC.
 * The topology takes ConfigBaseRTT and EgressQueueLimit `auto`, as htsim
 * derives its window and queues from the fabric's round trip
 * (docs/protocol.md §§5, 9). */
#include "import.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nicd/nic.h"

#define IMPORT_MAX_HOSTS 65536

struct htsim_tier {
	uint64_t gbps, radix_down, radix_up, latency_ns, switch_latency_ns, oversubscribed;
	bool seen;
};

struct htsim_topo {
	uint64_t nodes, tiers;
	struct htsim_tier tier[2];
};

static bool fail(FILE *err, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* One line: "FILE:LINE: reason". */
static bool fail(FILE *err, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(err, "%s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(err, fmt, ap);
	va_end(ap);
	fputc('\n', err);
	return false;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end;
}

/* A `Key value` line of the .topo file, in the current tier or the header. */
static bool topo_key(struct htsim_topo *t, int tier, const char *key, const char *val,
		     const char *file, int line, FILE *err)
{
	static const struct {
		const char *name;
		size_t off;
	} tier_keys[] = {
	    {"Downlink_speed_Gbps", offsetof(struct htsim_tier, gbps)},
	    {"Radix_Down", offsetof(struct htsim_tier, radix_down)},
	    {"Radix_Up", offsetof(struct htsim_tier, radix_up)},
	    {"Downlink_Latency_ns", offsetof(struct htsim_tier, latency_ns)},
	    {"Switch_Latency_ns", offsetof(struct htsim_tier, switch_latency_ns)},
	    {"Oversubscribed", offsetof(struct htsim_tier, oversubscribed)},
	};
	uint64_t v;

	if (!parse_u64(val, &v))
		return fail(err, file, line, "%s: '%s' is not a whole number", key, val ? val : "");
	if (!strcmp(key, "Nodes") && tier < 0)
		return (t->nodes = v), true;
	if (!strcmp(key, "Tiers") && tier < 0)
		return (t->tiers = v), true;
	if (!strcmp(key, "Podsize") && tier < 0)
		return true;
	for (size_t i = 0; tier >= 0 && i < sizeof(tier_keys) / sizeof(tier_keys[0]); i++)
		if (!strcmp(key, tier_keys[i].name)) {
			*(uint64_t *)((char *)&t->tier[tier] + tier_keys[i].off) = v;
			return true;
		}
	return fail(err, file, line, "%s: not a key of htsim's two-tier topology", key);
}

static bool topo_read(const char *file, struct htsim_topo *t, FILE *err)
{
	FILE *f = fopen(file, "r");
	char buf[512];
	int line = 0, tier = -1;
	bool ok = true;

	if (!f)
		return fail(err, file, 0, "cannot open: %s", strerror(errno));
	memset(t, 0, sizeof(*t));
	while (ok && fgets(buf, sizeof(buf), f)) {
		char *key, *val, *save;
		line++;
		if (buf[0] == '#' || !(key = strtok_r(buf, " \t\r\n", &save)))
			continue;
		val = strtok_r(NULL, " \t\r\n", &save);
		if (!strcmp(key, "Tier")) {
			uint64_t n;
			if (!parse_u64(val, &n) || n > 1)
				ok =
				    fail(err, file, line, "Tier: '%s' (allowed: 0 or 1, two tiers)",
					 val ? val : "");
			else
				tier = (int)n, t->tier[n].seen = true;
		} else {
			ok = topo_key(t, tier, key, val, file, line, err);
		}
	}
	fclose(f);
	return ok;
}

/* What mrcemu can build: two tiers, every leaf linked once to every spine,
 * no switch latency, no oversubscription. */
static bool topo_check(const char *file, const struct htsim_topo *t, FILE *err)
{
	const struct htsim_tier *t0 = &t->tier[0], *t1 = &t->tier[1];

	if (t->tiers != 2 || !t0->seen || !t1->seen)
		return fail(err, file, 0, "Tiers: %" PRIu64 " (allowed: 2, with Tier 0 and Tier 1)",
			    t->tiers);
	if (!t->nodes || t->nodes > IMPORT_MAX_HOSTS || !t0->radix_down ||
	    t->nodes % t0->radix_down)
		return fail(err, file, 0,
			    "Nodes: %" PRIu64 " hosts in leaves of %" PRIu64
			    " (allowed: 1..%d, a whole number of leaves)",
			    t->nodes, t0->radix_down, IMPORT_MAX_HOSTS);
	if (!t0->radix_up || t1->radix_down != t->nodes / t0->radix_down)
		return fail(err, file, 0,
			    "Radix_Up/Radix_Down: %" PRIu64 " spines of %" PRIu64
			    " leaves for %" PRIu64 " leaves (allowed: every leaf to every spine)",
			    t0->radix_up, t1->radix_down, t->nodes / t0->radix_down);
	if (t0->switch_latency_ns || t1->switch_latency_ns)
		return fail(err, file, 0,
			    "Switch_Latency_ns: mrcemu's switches add none (allowed: 0)");
	if (t0->oversubscribed > 1)
		return fail(err, file, 0, "Oversubscribed: %" PRIu64 " (allowed: 1)",
			    t0->oversubscribed);
	if (!t0->gbps || !t1->gbps)
		return fail(err, file, 0, "Downlink_speed_Gbps: needs a rate on both tiers");
	return true;
}

static void host_ip(uint64_t h, uint64_t per_leaf, char *buf, size_t len)
{
	uint64_t leaf = h / per_leaf, j = h % per_leaf;

	if (snprintf(buf, len, "10.%" PRIu64 ".%" PRIu64 ".%" PRIu64, leaf >> 8, leaf & 255,
		     j + 1) >= (int)len)
		buf[0] = 0; /* never: the callers' buffers hold any address */
}

static bool write_topology(FILE *f, const char *name, const char *workload,
			   const struct htsim_topo *t)
{
	const struct htsim_tier *t0 = &t->tier[0], *t1 = &t->tier[1];
	uint64_t k = t0->radix_down, leaves = t->nodes / k, spines = t0->radix_up;
	char ip[32];

	fprintf(f,
		"; imported from htsim by `mrcemu import htsim`: %" PRIu64 " hosts, %" PRIu64
		" leaves of %" PRIu64 ", %" PRIu64 " spines\n[emulation]\nname = %s\nseed = 1\n\n"
		"; htsim: MTU 4160 = 4,096 bytes of payload; window and queues from the\n"
		"; fabric's round trip (docs/protocol.md sections 5 and 9); quick adapt\n"
		"; ungated, as htsim_uec runs without -enable_qa_gate\n"
		"[nic]\nMSS = 4096\nConfigBaseRTT = auto\nQuickAdaptGate = false\n\n"
		"[switch]\nEgressQueueLimit = auto\n\n",
		t->nodes, leaves, k, spines, name);
	for (uint64_t h = 0; h < t->nodes; h++) {
		host_ip(h, k, ip, sizeof(ip));
		fprintf(f, "[nic h%" PRIu64 "]\nip = %s\n", h, ip);
	}
	for (uint64_t l = 0; l < leaves; l++)
		fprintf(f, "[switch leaf%" PRIu64 "]\n", l);
	for (uint64_t s = 0; s < spines; s++)
		fprintf(f, "[switch spine%" PRIu64 "]\n", s);
	for (uint64_t h = 0; h < t->nodes; h++)
		fprintf(f,
			"[link h%" PRIu64 " leaf%" PRIu64 "]\nrate = %" PRIu64
			"Gbps\ndelay = %" PRIu64 "ns\n",
			h, h / k, t0->gbps, t0->latency_ns);
	for (uint64_t l = 0; l < leaves; l++)
		for (uint64_t s = 0; s < spines; s++)
			fprintf(f,
				"[link leaf%" PRIu64 " spine%" PRIu64 "]\nrate = %" PRIu64
				"Gbps\ndelay = %" PRIu64 "ns\n",
				l, s, t1->gbps, t1->latency_ns);
	fprintf(f, "\n[workload]\nfile = %s\n", workload);
	return !ferror(f);
}

/* One flow: "SRC->DST id ID start T size BYTES". */
static bool cm_flow(char *buf, const char *file, int line, uint64_t hosts, FILE *out, FILE *err)
{
	char *save, *tok[8];
	uint64_t src, dst, id, start, size;
	int n = 0;
	char *arrow = strstr(buf, "->");

	if (strstr(buf, "trigger"))
		return fail(err, file, line,
			    "trigger flows are not imported (mrcemu orders messages with `after`)");
	if (!arrow)
		return fail(err, file, line, "'%s' is not SRC->DST id ID start T size BYTES",
			    strtok_r(buf, "\r\n", &save));
	*arrow = 0;
	if (!parse_u64(buf, &src))
		return fail(err, file, line, "SRC: '%s' is not a host number", buf);
	for (char *p = strtok_r(arrow + 2, " \t\r\n", &save); p && n < 8;
	     p = strtok_r(NULL, " \t\r\n", &save))
		tok[n++] = p;
	if (n != 7 || strcmp(tok[1], "id") || strcmp(tok[3], "start") || strcmp(tok[5], "size") ||
	    !parse_u64(tok[0], &dst) || !parse_u64(tok[2], &id) || !parse_u64(tok[4], &start) ||
	    !parse_u64(tok[6], &size))
		return fail(err, file, line, "not SRC->DST id ID start T size BYTES");
	if (src >= hosts || dst >= hosts || src == dst)
		return fail(err, file, line,
			    "%" PRIu64 "->%" PRIu64
			    ": hosts (allowed: two different hosts 0..%" PRIu64 ")",
			    src, dst, hosts - 1);
	if (!id || id > NIC_MAX_MSG_ID)
		return fail(err, file, line, "id: %" PRIu64 " (allowed: 1..%llu)", id,
			    (unsigned long long)NIC_MAX_MSG_ID);
	if (size > UINT32_MAX)
		return fail(err, file, line, "size: %" PRIu64 " (allowed: 0..4294967295)", size);
	fprintf(out, "%" PRIu64 ",%" PRIu64 "ps,h%" PRIu64 ",h%" PRIu64 ",%" PRIu64 ",\n", id,
		start, src, dst, size);
	return true;
}

static bool write_workload(const char *file, uint64_t hosts, FILE *out, FILE *err)
{
	FILE *f = fopen(file, "r");
	char buf[512];
	int line = 0;
	bool ok = true;

	if (!f)
		return fail(err, file, 0, "cannot open: %s", strerror(errno));
	fprintf(out, "id,at,src,dst,bytes,after\n");
	while (ok && fgets(buf, sizeof(buf), f)) {
		uint64_t n;
		line++;
		if (buf[0] == '#' || strspn(buf, " \t\r\n") == strlen(buf))
			continue;
		if (!strncmp(buf, "Nodes ", 6)) {
			if (!parse_u64(strtok(buf + 6, " \t\r\n"), &n) || n > hosts)
				ok = fail(err, file, line,
					  "Nodes: more than the topology's %" PRIu64 " hosts",
					  hosts);
		} else if (strncmp(buf, "Connections ", 12)) {
			ok = cm_flow(buf, file, line, hosts, out, err);
		}
	}
	fclose(f);
	return ok && !ferror(out);
}

/* NAME from CM's file name, without its folder and extension. */
static void scenario_name(const char *cm, char *name, size_t len)
{
	char copy[4096], *base, *dot;

	snprintf(copy, sizeof(copy), "%s", cm);
	base = basename(copy);
	if ((dot = strrchr(base, '.')))
		*dot = 0;
	snprintf(name, len, "%s", base);
}

int import_htsim(const char *topo, const char *cm, const char *outdir, FILE *err)
{
	struct htsim_topo t;
	char name[256], ini[4400], csv[4400];
	FILE *fi, *fc;
	bool ok;

	if (!topo_read(topo, &t, err) || !topo_check(topo, &t, err))
		return 2;
	if (mkdir(outdir, 0777) && errno != EEXIST) {
		fprintf(err, "mrcemu: %s: %s\n", outdir, strerror(errno));
		return 2;
	}
	scenario_name(cm, name, sizeof(name));
	snprintf(ini, sizeof(ini), "%s/%s.ini", outdir, name);
	snprintf(csv, sizeof(csv), "%s/%s.csv", outdir, name);
	if (!(fc = fopen(csv, "w"))) {
		fprintf(err, "mrcemu: %s: %s\n", csv, strerror(errno));
		return 2;
	}
	ok = write_workload(cm, t.nodes, fc, err);
	if (fclose(fc) || !ok || !(fi = fopen(ini, "w"))) {
		if (ok)
			fprintf(err, "mrcemu: %s: %s\n", ini, strerror(errno));
		return 2;
	}
	snprintf(csv, sizeof(csv), "%s.csv", name);
	ok = write_topology(fi, name, csv, &t);
	if (fclose(fi) || !ok) {
		fprintf(err, "mrcemu: %s: write failed\n", ini);
		return 2;
	}
	fprintf(stdout, "%s\n", ini);
	return 0;
}
