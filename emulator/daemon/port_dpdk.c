/* emulator/daemon/port_dpdk.c — the DPDK port (port.h): frames through DPDK's
 * ethdev API (`--port dpdk:DEVARGS`, built with `make DPDK=1`; docs/topology.md,
 * Port kinds).  DEVARGS is a virtual device and its arguments, e.g.
 * net_af_packet0,iface=p0,framesz=10240,blocksz=20480 (DPDK's AF_PACKET PMD
 * on the veth p0) or net_tap0,iface=dtap0.
 *
 * Every daemon is its own DPDK primary process: the EAL starts at the first
 * DPDK port with --no-huge --no-shconf (no hugepages, no shared files, so
 * any number of daemons coexist; DPDK 22.11 refuses --in-memory with
 * --no-huge, which implies legacy memory), no PCI scan, no telemetry, and the
 * daemon's CPU affinity is given back afterwards (the EAL pins the main
 * thread to one core; two cores carry every daemon here).  One Rx and one
 * Tx queue.  The vdevs used here have no Rx interrupts, so the port's fd is
 * a timerfd that fires every DPDK_POLL_NS: the daemon's loop polls the queue
 * on it, a short sleep rather than busy polling.  Mbufs hold a whole frame
 * (PORT_MAX_FRAME) and then some; a segmented one is copied out whole. */
#include "port.h"

#include <stdio.h>

#ifndef MRC_DPDK

struct port *port_dpdk_open(const char *devargs, struct port_rx_size rx, char *err, size_t errlen)
{
	(void)rx;
	snprintf(err, errlen, "port dpdk:%s: mrcemu was built without DPDK (make DPDK=1)", devargs);
	return NULL;
}

#else

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#define DPDK_POLL_NS   100000 /* 100 us between polls of the Rx queue */
#define DPDK_RING      512
#define DPDK_POOL      2047
/* An mbuf holds a whole ring frame of the AF_PACKET PMD (framesz 10240). */
#define DPDK_MBUF_ROOM 10240
#define DPDK_BURST     32
#define DPDK_TX_TRIES  1000

struct port_dpdk {
	struct port up;
	uint16_t port_id;
	int timer_fd;
	struct rte_mempool *pool;
	struct rte_mbuf *tx[DPDK_BURST];
	unsigned tx_count;
	uint8_t copy[PORT_MAX_FRAME]; /* a segmented frame, made whole */
};

static struct port_dpdk *dp_of(const struct port *p)
{
	return (struct port_dpdk *)p;
}

static int dp_fd(const struct port *p)
{
	return dp_of(p)->timer_fd;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static size_t dp_recv(struct port *p, size_t max, port_rx_fn fn, void *arg)
{
	struct port_dpdk *d = dp_of(p);
	struct rte_mbuf *m[DPDK_BURST];
	uint64_t ticks;
	size_t n = 0;

	if (read(d->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return 0;
	while (!max || n < max) {
		uint16_t want = (uint16_t)(max && max - n < DPDK_BURST ? max - n : DPDK_BURST);
		uint16_t got = rte_eth_rx_burst(d->port_id, 0, m, want);
		uint64_t now = mono_ns();
		for (uint16_t i = 0; i < got; i++) {
			uint32_t len = rte_pktmbuf_pkt_len(m[i]);
			if (len > PORT_MAX_FRAME) {
				p->stats.rx_truncated++;
				len = PORT_MAX_FRAME;
			}
			const uint8_t *data = rte_pktmbuf_read(m[i], 0, len, d->copy);
			p->stats.rx_frames++;
			p->stats.rx_bytes += len;
			if (data)
				fn(arg, data, len, now);
			rte_pktmbuf_free(m[i]);
		}
		n += got;
		if (got < want)
			break;
	}
	return n;
}

static void dp_flush(struct port *p)
{
	struct port_dpdk *d = dp_of(p);
	unsigned sent = 0, tries = 0;

	while (sent < d->tx_count && tries++ < DPDK_TX_TRIES) {
		sent +=
		    rte_eth_tx_burst(d->port_id, 0, d->tx + sent, (uint16_t)(d->tx_count - sent));
		if (sent < d->tx_count) {
			p->stats.tx_retries++;
			sched_yield();
		}
	}
	for (unsigned i = 0; i < sent; i++) {
		p->stats.tx_frames++;
		p->stats.tx_bytes += rte_pktmbuf_pkt_len(d->tx[i]);
	}
	for (unsigned i = sent; i < d->tx_count; i++) {
		p->stats.tx_dropped++;
		rte_pktmbuf_free(d->tx[i]);
	}
	d->tx_count = 0;
}

/* The next frame is built straight in an mbuf; NULL pool (never here, the
 * pool holds more than a burst and the ring) would be a bug. */
static uint8_t *dp_tx_buf(struct port *p)
{
	struct port_dpdk *d = dp_of(p);

	if (d->tx_count == DPDK_BURST)
		dp_flush(p);
	if (!d->tx[d->tx_count] && !(d->tx[d->tx_count] = rte_pktmbuf_alloc(d->pool)))
		abort();
	return rte_pktmbuf_mtod(d->tx[d->tx_count], uint8_t *);
}

static void dp_tx_commit(struct port *p, size_t len)
{
	struct port_dpdk *d = dp_of(p);
	struct rte_mbuf *m = d->tx[d->tx_count++];

	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	if (d->tx_count < DPDK_BURST)
		d->tx[d->tx_count] = NULL;
}

static void dp_close(struct port *p)
{
	struct port_dpdk *d = dp_of(p);

	dp_flush(p);
	if (d->tx_count < DPDK_BURST && d->tx[d->tx_count])
		rte_pktmbuf_free(d->tx[d->tx_count]);
	rte_eth_dev_stop(d->port_id);
	rte_eth_dev_close(d->port_id);
	if (d->timer_fd >= 0)
		close(d->timer_fd);
	free(d);
}

static const struct port_class dpdk_class = {
    .name = "dpdk",
    .fd = dp_fd,
    .recv = dp_recv,
    .tx_buf = dp_tx_buf,
    .tx_commit = dp_tx_commit,
    .flush = dp_flush,
    .close = dp_close,
};

static struct rte_mempool *dpdk_pool;

/* The EAL once per process, and one mbuf pool for its ports. */
static bool eal_start(char *err, size_t errlen)
{
	static bool started;
	char *argv[] = {"mrcemu",	  "--no-huge",	 "--no-shconf", "--no-pci",
			"--no-telemetry", "--log-level", "error",	NULL};
	cpu_set_t cpus;

	if (started)
		return true;
	sched_getaffinity(0, sizeof(cpus), &cpus);
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		snprintf(err, errlen, "DPDK EAL: %s", rte_strerror(rte_errno));
		return false;
	}
	sched_setaffinity(0, sizeof(cpus), &cpus);
	dpdk_pool = rte_pktmbuf_pool_create("mrc", DPDK_POOL, 0, 0,
					    DPDK_MBUF_ROOM + RTE_PKTMBUF_HEADROOM, SOCKET_ID_ANY);
	if (!dpdk_pool) {
		snprintf(err, errlen, "DPDK mbuf pool: %s", rte_strerror(rte_errno));
		return false;
	}
	started = true;
	return true;
}

/* The virtual device probed (hot-plugged: a switchd may open several after
 * the EAL started), configured with one queue each way, and started. */
static bool dev_start(struct port_dpdk *d, const char *devargs, const char *name, char *err,
		      size_t errlen)
{
	struct rte_eth_conf conf;
	int rc;

	/* The ethdev MTU stays at its default: DPDK 22.11's AF_PACKET PMD
	 * reports 1,518 bytes at most, yet its 16 KiB ring frames carry the
	 * veth's 9,000-byte MTU both ways (mbufs hold PORT_MAX_FRAME). */
	memset(&conf, 0, sizeof(conf));
	if ((rc = rte_dev_probe(devargs)) < 0 ||
	    (rc = rte_eth_dev_get_port_by_name(name, &d->port_id)) < 0 ||
	    (rc = rte_eth_dev_configure(d->port_id, 1, 1, &conf)) < 0 ||
	    (rc = rte_eth_rx_queue_setup(d->port_id, 0, DPDK_RING, SOCKET_ID_ANY, NULL,
					 dpdk_pool)) < 0 ||
	    (rc = rte_eth_tx_queue_setup(d->port_id, 0, DPDK_RING, SOCKET_ID_ANY, NULL)) < 0 ||
	    (rc = rte_eth_dev_start(d->port_id)) < 0) {
		snprintf(err, errlen, "port dpdk:%s: %s", devargs, rte_strerror(-rc));
		return false;
	}
	rte_eth_promiscuous_enable(d->port_id);
	return true;
}

/* An AF_PACKET vdev's kernel ring holds the port's waiting frames: its
 * framecnt is rx.slots (even: two 10 KiB frames a block) unless DEVARGS
 * gives one.  Other vdevs keep their own. */
static void with_framecnt(const char *devargs, struct port_rx_size rx, char *out, size_t len)
{
	unsigned n = rx.slots ? rx.slots + (rx.slots & 1) : PORT_RX_SLOTS;

	if (!strncmp(devargs, "net_af_packet", 13) && !strstr(devargs, "framecnt="))
		snprintf(out, len, "%s,framecnt=%u", devargs, n);
	else
		snprintf(out, len, "%s", devargs);
}

struct port *port_dpdk_open(const char *devargs, struct port_rx_size rx, char *err, size_t errlen)
{
	struct port_dpdk *d = calloc(1, sizeof(*d));
	struct itimerspec every = {{0, DPDK_POLL_NS}, {0, DPDK_POLL_NS}};
	char name[40], args[512];
	const char *comma = strchr(devargs, ',');
	size_t n = comma ? (size_t)(comma - devargs) : strlen(devargs);

	if (!d || n == 0 || n >= sizeof(name)) {
		snprintf(err, errlen, "port dpdk:%s: %s", devargs,
			 d ? "needs a device name (e.g. net_af_packet0,iface=v0)"
			   : "out of memory");
		free(d);
		return NULL;
	}
	memcpy(name, devargs, n);
	name[n] = 0;
	d->up.cls = &dpdk_class;
	d->up.tx_cap = PORT_MAX_FRAME;
	d->timer_fd = -1;
	snprintf(d->up.name, sizeof(d->up.name), "dpdk:%s", name);
	with_framecnt(devargs, rx, args, sizeof(args));
	if (!eal_start(err, errlen) || !dev_start(d, args, name, err, errlen)) {
		free(d);
		return NULL;
	}
	d->pool = dpdk_pool;
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->timer_fd < 0 || timerfd_settime(d->timer_fd, 0, &every, NULL) < 0) {
		snprintf(err, errlen, "port dpdk:%s: timerfd: %s", name, strerror(errno));
		dp_close(&d->up);
		return NULL;
	}
	return &d->up;
}

#endif
