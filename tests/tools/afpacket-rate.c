/* tests/tools/afpacket-rate.c — the raw frame rate of an AF_PACKET port
 * pair, the ceiling the daemons' aggregate frame rate is measured against
 * (scripts/bench-fidelity, docs/promises.md): the same port layer the
 * daemons use (emulator/daemon/port.h), no engine.
 *
 *   afpacket-rate send IF N BYTES   send N frames of BYTES on IF, batched:
 *                                   IPv4/UDP frames to a MAC not the
 *                                   receiver's, like the daemons'
 *   afpacket-rate recv IF N         count frames on IF until N or 3 s idle
 *   afpacket-rate hold IF SLOTS BYTES
 *                                   open IF to hold SLOTS frames of BYTES,
 *                                   say "ready", read nothing until stdin
 *                                   ends, then count what the kernel held
 *
 * send and recv print one line: "frames N seconds S rate R" (frames per
 * second, from the first frame to the last); hold prints "held N dropped
 * D" (D: frames the kernel dropped for a full queue). */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/port.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct count {
	unsigned long n;
	double first, last;
};

static void counted(void *arg, const uint8_t *data, size_t len, uint64_t rx_mono_ns)
{
	struct count *c = arg;

	(void)data;
	(void)len;
	(void)rx_mono_ns;
	c->last = now_s();
	if (!c->n++)
		c->first = c->last;
}

static int do_recv(struct port *p, unsigned long want)
{
	struct count c = {0};
	struct pollfd pfd = {.fd = port_fd(p), .events = POLLIN};

	while (c.n < want) {
		if (poll(&pfd, 1, 3000) <= 0)
			break;
		port_recv(p, 0, counted, &c);
	}
	printf("frames %lu seconds %.6f rate %.0f\n", c.n, c.last - c.first,
	       c.last > c.first ? (double)(c.n - 1) / (c.last - c.first) : 0.0);
	return c.n == want ? 0 : 1;
}

/* Frame i of `bytes` bytes as the daemons send theirs: IPv4, UDP to port
 * 4791, to a unicast MAC that is not the receiving veth's (as a daemon's
 * veth has not its node's: docs/architecture.md), so the receiving kernel
 * does for it what it does for theirs: a copy for the packet socket, since
 * the IPv4 handler takes it too, and a drop on entry to the IP stack. */
static void frame_like_daemons(uint8_t *b, size_t bytes, unsigned long i)
{
	size_t ip_len = bytes - 14;
	uint32_t sum = 0;

	memcpy(b, "\x02\0\0\0\0\xfe", 6);
	memcpy(b + 6, "\x02\0\0\0\0\x01", 6);
	b[12] = 0x08, b[13] = 0x00;
	memset(b + 14, (int)(i & 0xFF), ip_len);
	memcpy(b + 14, "\x45\0\0\0\0\0\x40\0\x40\x11\0\0\x0a\0\0\x09\x0a\0\0\x01", 20);
	b[16] = (uint8_t)(ip_len >> 8), b[17] = (uint8_t)ip_len;
	for (int k = 0; k < 20; k += 2)
		sum += (uint32_t)(b[14 + k] << 8 | b[15 + k]);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	b[24] = (uint8_t)(~sum >> 8), b[25] = (uint8_t)~sum;
	memcpy(b + 34, "\x12\xb7\x12\xb7", 4); /* UDP 4791 -> 4791, no checksum */
	b[38] = (uint8_t)((ip_len - 20) >> 8), b[39] = (uint8_t)(ip_len - 20);
	b[40] = b[41] = 0;
}

static int do_send(struct port *p, unsigned long n, size_t bytes)
{
	double t0 = now_s(), t1;

	for (unsigned long i = 0; i < n; i++) {
		frame_like_daemons(port_tx_buf(p), bytes, i);
		port_tx_commit(p, bytes);
	}
	port_flush(p);
	t1 = now_s();
	printf("frames %lu seconds %.6f rate %.0f dropped %llu\n", n, t1 - t0,
	       (double)n / (t1 - t0), (unsigned long long)port_stats(p)->tx_dropped);
	return 0;
}

/* What a port sized for `slots` frames holds while its daemon reads
 * nothing (docs/promises.md, Receive queues): tests/port.sh. */
static int do_hold(const char *ifname, unsigned slots, size_t bytes)
{
	char err[256];
	struct count c = {0};
	struct port *p =
	    port_open(ifname, (struct port_rx_size){slots, bytes, true}, err, sizeof(err));

	if (!p) {
		fprintf(stderr, "afpacket-rate: %s\n", err);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (getchar() != EOF)
		;
	while (port_recv(p, 0, counted, &c))
		;
	printf("held %lu dropped %llu\n", c.n, (unsigned long long)port_stats(p)->rx_dropped);
	port_close(p);
	return 0;
}

int main(int argc, char **argv)
{
	char err[256];
	struct port *p;
	int rc;

	if (argc < 4 ||
	    (strcmp(argv[1], "send") && strcmp(argv[1], "recv") && strcmp(argv[1], "hold")) ||
	    (strcmp(argv[1], "recv") && argc < 5)) {
		fprintf(stderr,
			"usage: afpacket-rate send IF N BYTES | recv IF N | hold IF SLOTS BYTES\n");
		return 2;
	}
	if (!strcmp(argv[1], "hold"))
		return do_hold(argv[2], (unsigned)strtoul(argv[3], NULL, 10),
			       strtoul(argv[4], NULL, 10));
	/* as a daemon's port to another daemon: frames carry their arrival */
	if (!(p = port_open(argv[2], (struct port_rx_size){PORT_RX_SLOTS, PORT_MAX_FRAME, true},
			    err, sizeof(err)))) {
		fprintf(stderr, "afpacket-rate: %s\n", err);
		return 1;
	}
	if (!strcmp(argv[1], "send")) {
		size_t bytes = strtoul(argv[4], NULL, 10);
		rc = do_send(p, strtoul(argv[3], NULL, 10),
			     bytes < 60		      ? 60
			     : bytes > PORT_MAX_FRAME ? PORT_MAX_FRAME
						      : bytes);
	} else {
		rc = do_recv(p, strtoul(argv[3], NULL, 10));
	}
	port_close(p);
	return rc;
}
