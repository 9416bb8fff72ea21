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
 *   afpacket-rate link IF N         send N frames of one link as a daemon
 *                                   does: stamped IPv4 frames and promise
 *                                   frames mixed, sequence numbers 0..N-1
 *   afpacket-rate order IF N        read N frames of a link and check that
 *                                   they come in its order (a port to a
 *                                   daemon reads promise frames apart)
 *
 * send and recv print one line: "frames N seconds S rate R" (frames per
 * second, from the first frame to the last); hold prints "held N dropped
 * D tx_cap C timestamps on|off" (D: frames the kernel dropped for a full
 * queue; C: the bytes of a transmit buffer; whether the kernel is asked for
 * receive times); order prints "in
 * order N of N promises P" or where the order broke. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/wire.h"
#include "daemon/daemon.h"
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
 * does for it what it does for theirs: a drop on entry to the IP stack,
 * then the frame to the port's IPv4 socket. */
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

/* A port as a daemon opens one to another daemon (daemon_rx_size): its
 * frames carry their arrival, and promise frames wait apart, `promises` of
 * them. */
static struct port *link_port(const char *ifname, unsigned slots, unsigned promises, size_t bytes,
			      char *err, size_t errlen)
{
	return port_open(ifname, (struct port_rx_size){slots, bytes, true, promises}, err, errlen);
}

/* Whether the port's socket asks the kernel for receive times. */
static bool asks_timestamps(const struct port *p)
{
	int on = 0;
	socklen_t len = sizeof(on);

	return !getsockopt(port_fd(p), SOL_SOCKET, SO_TIMESTAMPNS, &on, &len) && on;
}

/* What a port sized for `slots` frames holds while its daemon reads
 * nothing (docs/promises.md, Receive queues): tests/port.sh. */
static int do_hold(const char *ifname, unsigned slots, size_t bytes)
{
	char err[256];
	struct count c = {0};
	struct port *p = link_port(ifname, slots, DAEMON_RX_PROMISE_SLOTS, bytes, err, sizeof(err));

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
	printf("held %lu dropped %llu tx_cap %zu timestamps %s\n", c.n,
	       (unsigned long long)port_stats(p)->rx_dropped, p->tx_cap,
	       asks_timestamps(p) ? "on" : "off");
	port_close(p);
	return 0;
}

/* Frame k of a link: a promise frame when k's bits say so (runs of either
 * kind, of uneven lengths), else a stamped frame of 100 to 4,160 bytes. */
static bool link_promise(unsigned long k)
{
	return (k * 2654435761u >> 7) % 5 == 0 || (k / 37) % 4 == 1;
}

static int do_link(struct port *p, unsigned long n)
{
	static const uint8_t dst[6] = {2, 0, 0, 0, 0, 0xfe}, src[6] = {2, 0, 0, 0, 0, 1};

	for (unsigned long k = 0; k < n; k++) {
		uint8_t *b = port_tx_buf(p);
		size_t len = 100 + (k * 97) % 4060;
		if (link_promise(k)) {
			struct wire_promise w = {.promise = k, .seq = (uint32_t)k};
			port_tx_commit(p, wire_promise_put(b, dst, src, &w));
		} else {
			frame_like_daemons(b, len, k);
			wire_trailer_put(b + len, (ps_t)k, (uint32_t)k);
			port_tx_commit(p, len + WIRE_TRAILER_LEN);
		}
		if (k % 61 == 60) { /* a reader's batch may end anywhere */
			port_flush(p);
			usleep(50);
		}
	}
	port_flush(p);
	return 0;
}

struct order {
	unsigned long n, promises;
	long broke; /* the first frame out of place, -1 none */
};

static void ordered(void *arg, const uint8_t *data, size_t len, uint64_t rx_mono_ns)
{
	struct order *o = arg;
	struct wire_promise w;
	uint32_t seq = UINT32_MAX;
	ps_t stamp;

	(void)rx_mono_ns;
	if (wire_promise_get(data, len, &w))
		seq = w.seq, o->promises++;
	else if (!wire_trailer_get(data, len, &stamp, &seq))
		seq = UINT32_MAX;
	if (seq != o->n && o->broke < 0)
		o->broke = (long)o->n;
	o->n++;
}

static int do_order(struct port *p, unsigned long want)
{
	struct order o = {.broke = -1};
	struct pollfd pfd[2] = {{.fd = port_fd(p), .events = POLLIN},
				{.fd = port_fd2(p), .events = POLLIN}};

	while (o.n < want) {
		if (poll(pfd, pfd[1].fd >= 0 ? 2 : 1, 3000) <= 0)
			break;
		port_recv(p, 0, ordered, &o);
	}
	if (o.broke >= 0)
		printf("out of order at %ld of %lu\n", o.broke, o.n);
	else
		printf("in order %lu of %lu promises %lu\n", o.n, want, o.promises);
	return o.n == want && o.broke < 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	char err[256];
	struct port *p;
	int rc;

	bool two = argc >= 4 && (!strcmp(argv[1], "recv") || !strcmp(argv[1], "link") ||
				 !strcmp(argv[1], "order"));

	if (argc < 4 || (!two && strcmp(argv[1], "send") && strcmp(argv[1], "hold")) ||
	    (!two && argc < 5)) {
		fprintf(stderr, "usage: afpacket-rate send IF N BYTES | recv IF N | hold IF SLOTS "
				"BYTES | link IF N | order IF N\n");
		return 2;
	}
	if (!strcmp(argv[1], "hold"))
		return do_hold(argv[2], (unsigned)strtoul(argv[3], NULL, 10),
			       strtoul(argv[4], NULL, 10));
	/* order checks the order, not the room (hold does): its port holds
	 * every frame of the link, so that a reader the machine slows (a
	 * sanitizer's build, a busy machine) loses none. */
	unsigned slots = !strcmp(argv[1], "order") ? (unsigned)strtoul(argv[3], NULL, 10) : 0;

	if (slots < PORT_RX_SLOTS)
		slots = PORT_RX_SLOTS;
	if (!(p = link_port(argv[2], slots,
			    slots == PORT_RX_SLOTS ? DAEMON_RX_PROMISE_SLOTS : slots,
			    PORT_MAX_FRAME, err, sizeof(err)))) {
		fprintf(stderr, "afpacket-rate: %s\n", err);
		return 1;
	}
	if (!strcmp(argv[1], "send")) {
		size_t bytes = strtoul(argv[4], NULL, 10);
		rc = do_send(p, strtoul(argv[3], NULL, 10),
			     bytes < 60		      ? 60
			     : bytes > PORT_MAX_FRAME ? PORT_MAX_FRAME
						      : bytes);
	} else if (!strcmp(argv[1], "link")) {
		rc = do_link(p, strtoul(argv[3], NULL, 10));
	} else if (!strcmp(argv[1], "order")) {
		rc = do_order(p, strtoul(argv[3], NULL, 10));
	} else {
		rc = do_recv(p, strtoul(argv[3], NULL, 10));
	}
	port_close(p);
	return rc;
}
