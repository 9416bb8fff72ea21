/* emulator/daemon/port_tap.c — the TAP port (port.h): frames through a Linux TAP
 * device, for QEMU VMs, containers and user-space tools that speak TAP
 * (`--port tap:NAME`; docs/topology.md, Port kinds).
 *
 * The port attaches to the TAP device NAME in the daemon's namespace, or
 * creates it, with IFF_NO_PI (bare Ethernet frames), and brings it up.  A
 * read() is one frame the kernel sent out of the device; a write() is one
 * frame the kernel receives on it.  The fd is non-blocking; reads stop at
 * EAGAIN.  There is no kernel receive timestamp: a frame's is the moment it
 * is read (CLOCK_MONOTONIC), which only frames from external endpoints use
 * (stamped frames carry their arrival).  A frame the kernel cannot take now
 * (EAGAIN on write) is retried, yielding the core, then counted lost. */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "port.h"

#define TAP_TX_BATCH   32
#define TAP_TX_RETRIES 1000

struct port_tap {
	struct port up;
	int fd;
	uint8_t *tx_bufs; /* TAP_TX_BATCH x PORT_MAX_FRAME */
	size_t tx_len[TAP_TX_BATCH];
	unsigned tx_count;
	uint8_t rx_buf[PORT_MAX_FRAME + 1]; /* one more: a longer frame is told */
};

static struct port_tap *tap_of(const struct port *p)
{
	return (struct port_tap *)p;
}

static int tap_fd(const struct port *p)
{
	return tap_of(p)->fd;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static size_t tap_recv(struct port *p, size_t max, port_rx_fn fn, void *arg)
{
	struct port_tap *t = tap_of(p);
	size_t n = 0;

	while (!max || n < max) {
		ssize_t got = read(t->fd, t->rx_buf, sizeof(t->rx_buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		size_t len = (size_t)got;
		if (len > PORT_MAX_FRAME) {
			p->stats.rx_truncated++;
			len = PORT_MAX_FRAME;
		}
		p->stats.rx_frames++;
		p->stats.rx_bytes += len;
		fn(arg, t->rx_buf, len, mono_ns());
		n++;
	}
	return n;
}

static void tap_flush(struct port *p)
{
	struct port_tap *t = tap_of(p);

	for (unsigned i = 0; i < t->tx_count; i++) {
		const uint8_t *f = t->tx_bufs + (size_t)i * PORT_MAX_FRAME;
		int tries = 0;
		ssize_t put;
		while ((put = write(t->fd, f, t->tx_len[i])) < 0 &&
		       (errno == EINTR || errno == EAGAIN || errno == ENOBUFS) &&
		       tries++ < TAP_TX_RETRIES) {
			p->stats.tx_retries++;
			sched_yield();
		}
		if (put == (ssize_t)t->tx_len[i]) {
			p->stats.tx_frames++;
			p->stats.tx_bytes += t->tx_len[i];
		} else {
			p->stats.tx_dropped++;
		}
	}
	t->tx_count = 0;
}

static uint8_t *tap_tx_buf(struct port *p)
{
	struct port_tap *t = tap_of(p);

	if (t->tx_count == TAP_TX_BATCH)
		tap_flush(p);
	return t->tx_bufs + (size_t)t->tx_count * PORT_MAX_FRAME;
}

static void tap_tx_commit(struct port *p, size_t len)
{
	struct port_tap *t = tap_of(p);

	t->tx_len[t->tx_count++] = len;
}

static void tap_close(struct port *p)
{
	struct port_tap *t = tap_of(p);

	tap_flush(p);
	if (t->fd >= 0)
		close(t->fd);
	free(t->tx_bufs);
	free(t);
}

static const struct port_class tap_class = {
    .name = "tap",
    .fd = tap_fd,
    .recv = tap_recv,
    .tx_buf = tap_tx_buf,
    .tx_commit = tap_tx_commit,
    .flush = tap_flush,
    .close = tap_close,
};

/* The device up, as a link must be to carry frames. */
static bool tap_up(const char *ifname, char *err, size_t errlen)
{
	struct ifreq ifr = {0};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok = false;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		ok = ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
	}
	if (!ok)
		snprintf(err, errlen, "port tap:%s: cannot bring it up: %s", ifname,
			 strerror(errno));
	if (s >= 0)
		close(s);
	return ok;
}

/* The device's queue toward its reader (the tun driver's ring is tx_queue_len
 * frames long): the port's waiting frames. */
static bool tap_queue(const char *ifname, unsigned slots, char *err, size_t errlen)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = {0};
	bool ok;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_qlen = (int)slots;
	ok = s >= 0 && ioctl(s, SIOCSIFTXQLEN, &ifr) == 0;
	if (!ok)
		snprintf(err, errlen, "port tap:%s: cannot hold %u frames: %s", ifname, slots,
			 strerror(errno));
	if (s >= 0)
		close(s);
	return ok;
}

struct port *port_tap_open(const char *ifname, struct port_rx_size rx, char *err, size_t errlen)
{
	struct port_tap *t = calloc(1, sizeof(*t));
	struct ifreq ifr = {0};

	if (!t || !(t->tx_bufs = malloc((size_t)TAP_TX_BATCH * PORT_MAX_FRAME))) {
		snprintf(err, errlen, "port tap:%s: out of memory", ifname);
		free(t);
		return NULL;
	}
	t->up.cls = &tap_class;
	t->up.tx_cap = PORT_MAX_FRAME;
	snprintf(t->up.name, sizeof(t->up.name), "tap:%s", ifname);
	if (strlen(ifname) >= IFNAMSIZ) {
		snprintf(err, errlen, "port tap:%s: name longer than %d characters", ifname,
			 IFNAMSIZ - 1);
		t->fd = -1;
		tap_close(&t->up);
		return NULL;
	}
	t->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (t->fd < 0 || ioctl(t->fd, TUNSETIFF, &ifr) < 0) {
		snprintf(err, errlen, "port tap:%s: %s", ifname, strerror(errno));
		tap_close(&t->up);
		return NULL;
	}
	if (!tap_queue(ifname, rx.slots ? rx.slots : PORT_RX_SLOTS, err, errlen) ||
	    !tap_up(ifname, err, errlen)) {
		tap_close(&t->up);
		return NULL;
	}
	return &t->up;
}
