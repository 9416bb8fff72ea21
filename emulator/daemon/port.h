/* emulator/daemon/port.h — a daemon's real port: frames in and out of one network
 * interface (docs/architecture.md, Daemons).  An AF_PACKET socket read with
 * recvmmsg implements it (emulator/daemon/port_packet.c); a TAP port and the optional
 * DPDK port (make DPDK=1) implement the same class.
 *
 * The daemon's event loop watches port_fd() (and port_fd2()); when it is
 * readable, or whenever the daemon wants to know every frame that has
 * arrived so far, port_recv() hands over the waiting frames one by one,
 * each with the CLOCK_MONOTONIC instant the kernel received it (unless
 * rx.stamped).  Frames leave in batches: port_tx_buf() lends a buffer to
 * build the next frame in, port_tx_commit() queues it, port_flush() sends
 * what is queued. */
#ifndef EMULATOR_PORT_H
#define EMULATOR_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest frame a port carries: MTU 9,000 + Ethernet header, with room. */
#define PORT_MAX_FRAME 9216

struct port;

/* One received frame; data is valid only during the callback. */
typedef void (*port_rx_fn)(void *arg, const uint8_t *data, size_t len, uint64_t rx_mono_ns);

struct port_stats {
	uint64_t rx_frames, rx_bytes;
	uint64_t rx_dropped;   /* the kernel found the receive queue full */
	uint64_t rx_truncated; /* longer than PORT_MAX_FRAME: cut */
	uint64_t tx_frames, tx_bytes;
	uint64_t tx_retries; /* sends the kernel refused for a moment */
	uint64_t tx_dropped; /* sends that failed for good */
};

/* What each kind of port implements. */
struct port_class {
	const char *name;
	int (*fd)(const struct port *p);
	int (*fd2)(const struct port *p); /* optional */
	size_t (*recv)(struct port *p, size_t max, port_rx_fn fn, void *arg);
	uint8_t *(*tx_buf)(struct port *p);
	void (*tx_commit)(struct port *p, size_t len);
	void (*flush)(struct port *p);
	void (*sync_stats)(struct port *p); /* optional: counters kept by the kernel */
	void (*close)(struct port *p);
};

/* Every kind of port starts with this. */
struct port {
	const struct port_class *cls;
	char name[64];
	struct port_stats stats;
	size_t tx_cap; /* the bytes of a port_tx_buf() buffer */
};

/* What a port holds of frames that arrived and are not read yet: `slots`
 * frames of up to `frame_max` bytes each (a longer one is cut and counted,
 * rx_truncated).  A daemon sizes it from its link's lookahead
 * (docs/promises.md, Receive queues); PORT_RX_DEFAULT where nothing bounds
 * it (ports facing external endpoints, tools). */
struct port_rx_size {
	unsigned slots;
	size_t frame_max;
	/* Every frame carries its own arrival (a trailer: the port faces a
	 * daemon, or nothing is read), so the kernel's receive time is not
	 * asked for and the callback gets 0. */
	bool stamped;
	/* A port to a daemon: its frames are IPv4 or promise frames, which
	 * share the link's sequence numbers; the promise frames may wait apart,
	 * this many of them, and come back in the link's order (an AF_PACKET
	 * port holds them in a ring of their own).  0: any frame. */
	unsigned promise_slots;
};

#define PORT_RX_SLOTS	512
#define PORT_RX_DEFAULT ((struct port_rx_size){PORT_RX_SLOTS, PORT_MAX_FRAME, false, 0})

/* Open a port by name: "tap:NAME" is a TAP port on device NAME,
 * "dpdk:DEVARGS" a DPDK ethdev port (make DPDK=1), any other name ("p0") an
 * AF_PACKET port on that interface; each holds rx.slots waiting frames.
 * NULL with one line in err on failure (the interface, and why). */
struct port *port_open(const char *name, struct port_rx_size rx, char *err, size_t errlen);

/* The TAP port on device ifname, created if need be, its kernel queue
 * rx.slots frames long (emulator/daemon/port_tap.c). */
struct port *port_tap_open(const char *ifname, struct port_rx_size rx, char *err, size_t errlen);

/* The DPDK port on virtual device DEVARGS ("net_af_packet0,iface=v0"); an
 * AF_PACKET vdev's kernel ring holds rx.slots frames unless DEVARGS gives
 * framecnt; in a build without DPDK, NULL and a line saying so
 * (emulator/daemon/port_dpdk.c). */
struct port *port_dpdk_open(const char *devargs, struct port_rx_size rx, char *err, size_t errlen);

/* The AF_PACKET port on interface ifname, its socket's receive buffer the
 * kernel's cost of rx.slots frames of rx.frame_max bytes
 * (emulator/daemon/port_packet.c). */
struct port *port_packet_open(const char *ifname, struct port_rx_size rx, char *err, size_t errlen);

/* A file descriptor that is readable while frames wait. */
static inline int port_fd(const struct port *p)
{
	return p->cls->fd(p);
}

/* A second one, readable while frames wait that port_fd() does not tell
 * of (an AF_PACKET port to a daemon: its promise frames), or -1.  A
 * waiting reader watches both. */
static inline int port_fd2(const struct port *p)
{
	return p->cls->fd2 ? p->cls->fd2(p) : -1;
}

/* Hand up to max waiting frames to fn (0: all that wait).  Returns how many. */
static inline size_t port_recv(struct port *p, size_t max, port_rx_fn fn, void *arg)
{
	return p->cls->recv(p, max, fn, arg);
}

/* A buffer of p->tx_cap bytes for the next frame (an AF_PACKET port's
 * hold rx.frame_max: the longest frame the fabric carries; a TAP or DPDK
 * port's PORT_MAX_FRAME); sends the queued batch first when it is full.
 * Never NULL. */
static inline uint8_t *port_tx_buf(struct port *p)
{
	return p->cls->tx_buf(p);
}

/* Queue the frame just built in port_tx_buf()'s buffer (len bytes). */
static inline void port_tx_commit(struct port *p, size_t len)
{
	p->cls->tx_commit(p, len);
}

/* Send every queued frame now. */
static inline void port_flush(struct port *p)
{
	p->cls->flush(p);
}

/* Flush, then close and free. */
static inline void port_close(struct port *p)
{
	if (p)
		p->cls->close(p);
}

/* The port's counters, the kernel's own brought up to date. */
static inline const struct port_stats *port_stats(struct port *p)
{
	if (p->cls->sync_stats)
		p->cls->sync_stats(p);
	return &p->stats;
}

#endif
