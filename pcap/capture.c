/* pcap/capture.c — nanosecond pcap files through libpcap, stamped with
 * virtual time (docs/architecture.md, Records and captures).  libpcap writes the
 * file (magic a1b23c4d); nothing here knows the format. */
#include "capture.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/records.h"

#define CAPTURE_SNAPLEN 65535

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
	c->pd = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, CAPTURE_SNAPLEN,
						     PCAP_TSTAMP_PRECISION_NANO);
	if (!c->pd) {
		snprintf(err, errlen, "%s: libpcap cannot open a capture", path);
		free(c);
		return NULL;
	}
	snprintf(c->path, sizeof c->path, "%s", path);
	/* never through a planted link (records_create) */
	FILE *f = records_create(path);
	if (!f || !(c->dumper = pcap_dump_fopen(c->pd, f))) {
		snprintf(err, errlen, "%s: %s", path, f ? pcap_geterr(c->pd) : strerror(errno));
		if (f)
			fclose(f);
		pcap_close(c->pd);
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
	pcap_dump((u_char *)c->dumper, &h, frame);
}

void capture_close(struct capture *c)
{
	if (!c)
		return;
	FILE *f = pcap_dump_file(c->dumper);
	if (fflush(f) || ferror(f))
		fprintf(stderr, "mrcemu: %s: writing failed: %s\n", c->path,
			strerror(errno ? errno : EIO));
	pcap_dump_close(c->dumper);
	pcap_close(c->pd);
	free(c);
}

long capture_read(const char *path, capture_read_fn fn, void *arg, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *h;
	const u_char *data;
	long n = 0;
	int rc;
	pcap_t *pd =
	    pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, ebuf);

	if (!pd) {
		snprintf(err, errlen, "%s", ebuf);
		return -1;
	}
	if (pcap_datalink(pd) != DLT_EN10MB) {
		snprintf(err, errlen, "%s: not an Ethernet capture (link type %d)", path,
			 pcap_datalink(pd));
		pcap_close(pd);
		return -1;
	}
	while ((rc = pcap_next_ex(pd, &h, &data)) == 1) {
		ps_t ns = (ps_t)h->ts.tv_sec * 1000000000ULL + (ps_t)h->ts.tv_usec;
		fn(arg, ns * PS_PER_NS, data, h->caplen);
		n++;
	}
	if (rc == PCAP_ERROR) {
		snprintf(err, errlen, "%s: %s", path, pcap_geterr(pd));
		n = -1;
	}
	pcap_close(pd);
	return n;
}
