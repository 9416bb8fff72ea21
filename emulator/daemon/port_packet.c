/* emulator/daemon/port_packet.c — the AF_PACKET port (port.h): packet sockets
 * bound to one interface, read with recvmmsg, batched transmit with
 * sendmmsg (docs/architecture.md, Daemons; docs/promises.md, What a frame
 * costs).
 *
 * Received frames wait in the socket's own queue, whose receive buffer
 * (SO_RCVBUFFORCE) is what rx.slots frames of rx.frame_max bytes may cost
 * the kernel: a limit, not memory taken up front.  That replaced a
 * TPACKET_V2 ring of as many slots (docs/promises.md, Receive queues): a
 * ring sized to the lookahead (2,127 slots of 4,256 bytes a port) costs its
 * pages at start, cleared, and every frame's status write lands on another
 * of thousands of pages; measured on leaf-spine-8 here the socket took
 * ~25 % less user and sys time.  (A TPACKET_V3 ring wakes its reader only
 * when a block fills or its timer, in whole milliseconds, runs out: a lone
 * frame waited 0.57 ms median here, against 16 us.)  Frames we send are
 * not looped back (PACKET_IGNORE_OUTGOING).
 *
 * A port facing an external endpoint has one socket for every EtherType.
 * A port facing a daemon, whose frames are IPv4 or promise frames and
 * nothing else, has one for each: the kernel hands a frame to the sockets
 * of every type (ETH_P_ALL) before its IP stack, sharing it, so such a
 * socket must clone it; a socket of the frame's own type on the device is
 * served after the IP stack has let go of it and takes it whole
 * (docs/promises.md, What a frame costs).  Stamped and promise frames share
 * the link's sequence numbers, and the two are read back in that order
 * (pp_merge).  Promise frames, a few percent of a link's, wait in a small
 * receive ring (TPACKET_V2, slots of 256 bytes) that is looked at without
 * a system call, so the merge reads the IPv4 socket as often as a port of
 * one socket reads its own.  Such a port sends by a third socket, which
 * gives the kernel each frame with a virtio header that makes the whole
 * frame the head of its buffer (PACKET_VNET_HDR): one linear buffer from a
 * slab rather than a head and a page fragment from the page allocator.
 *
 * Kernel receive timestamps (ports facing an external endpoint only) are
 * CLOCK_REALTIME; they are converted to CLOCK_MONOTONIC with the offset
 * between the two clocks read per batch. */
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "core/wire.h"
#include "port.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

/* Frames per sendmmsg. */
#define TX_BATCH 32
/* A veth refuses a frame (ENOBUFS) when the peer's backlog is full: retry
 * that many times, yielding the core, before counting it lost. */
#define TX_RETRIES 1000

/* Frames per recvmmsg. */
#define RX_BATCH 32

/* A promise ring's slots: a promise frame is Ethernet's minimum, and a
 * longer frame of that type is cut (and counted) there; 16 slots a page. */
#define RING_SLOT  256
#define RING_BLOCK 4096

/* A socket's queue as read: a batch of frames and where the reader is in
 * it, with when (`read_at`, in the order of the port's reads and looks) it
 * was read and when it was last found empty (`drained_at`): every frame the
 * kernel had queued there before a read that came back short was read. */
struct pp_rxq {
	int fd;
	size_t frame; /* a buffer's bytes */
	uint8_t *bufs;
	struct mmsghdr msgs[RX_BATCH];
	struct iovec iov[RX_BATCH];
	unsigned pos, n;
	uint64_t read_at, drained_at;
};

/* A port to a daemon's promise frames: the ring the kernel fills, the
 * slot the reader is at, and when its frame was first seen there. */
struct pp_ring {
	int fd;
	uint8_t *map;
	size_t bytes;
	unsigned slots, head;
	uint64_t seen_at;
};

struct port_packet {
	struct port up;
	int fd;	     /* every frame in; to a daemon, its IPv4 frames */
	bool linked; /* to a daemon: IPv4 and promise frames apart (rx.promise_slots) */
	bool stamps; /* each frame's receive time is asked for (not rx.stamped) */
	struct pp_rxq data;
	struct pp_ring promise;
	uint64_t reads; /* reads and sightings so far: read_at, drained_at, seen_at */
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct timespec))];
	} rx_ctl[RX_BATCH];
	/* Frames leave by tfd: fd, or for a port to a daemon a socket of its
	 * own that receives nothing and takes each frame in one linear buffer
	 * (PACKET_VNET_HDR: the virtio header before each frame says the whole
	 * frame is its head) rather than a head and a page fragment. */
	int tfd;
	uint8_t *tx_bufs; /* TX_BATCH x up.tx_cap */
	struct mmsghdr tx_msgs[TX_BATCH];
	struct iovec tx_iov[TX_BATCH][2]; /* the virtio header (tfd's own), the frame */
	struct virtio_net_hdr tx_vnet[TX_BATCH];
	unsigned tx_count;
};

static struct port_packet *pp_of(const struct port *p)
{
	return (struct port_packet *)p;
}

static int pp_fd(const struct port *p)
{
	return pp_of(p)->fd;
}

static int pp_fd2(const struct port *p)
{
	return pp_of(p)->promise.fd;
}

static uint64_t ts_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The kernel's receive time of a received message (CLOCK_REALTIME). */
static uint64_t pp_msg_ts(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		}
	}
	return 0;
}

/* What the kernel dropped on a socket for a full queue (or ring) since the
 * last call (PACKET_STATISTICS resets). */
static uint64_t socket_drops(int fd)
{
	struct tpacket_stats st;
	socklen_t len = sizeof(st);

	if (fd < 0 || getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &len))
		return 0;
	return st.tp_drops;
}

/* Asked when the stats are read, not per frame. */
static void pp_sync_stats(struct port *p)
{
	p->stats.rx_dropped += socket_drops(pp_of(p)->fd) + socket_drops(pp_of(p)->promise.fd);
}

/* Read up to `want` frames (at most a batch) into the empty queue, without
 * waiting, with their receive times when the port asked for them.
 * Returns the frames. */
static unsigned rxq_read(struct port_packet *pp, struct pp_rxq *q, size_t want)
{
	unsigned w = want < RX_BATCH ? (unsigned)want : RX_BATCH;
	int r;

	for (unsigned i = 0; i < w; i++) {
		q->msgs[i].msg_hdr.msg_control = pp->stamps ? pp->rx_ctl[i].buf : NULL;
		q->msgs[i].msg_hdr.msg_controllen = pp->stamps ? sizeof(pp->rx_ctl[i].buf) : 0;
		q->msgs[i].msg_hdr.msg_flags = 0;
	}
	do
		r = recvmmsg(q->fd, q->msgs, w, MSG_DONTWAIT, NULL);
	while (r < 0 && errno == EINTR);
	q->pos = 0;
	q->n = r > 0 ? (unsigned)r : 0;
	q->read_at = ++pp->reads;
	if (q->n < w)
		q->drained_at = q->read_at;
	return q->n;
}

/* Hand the queue's next frame to fn. */
static void rxq_take(struct port *p, struct pp_rxq *q, port_rx_fn fn, void *arg, uint64_t rx_ns)
{
	struct mmsghdr *m = &q->msgs[q->pos];

	if (m->msg_hdr.msg_flags & MSG_TRUNC)
		p->stats.rx_truncated++;
	p->stats.rx_frames++;
	p->stats.rx_bytes += m->msg_len;
	fn(arg, q->iov[q->pos++].iov_base, m->msg_len, rx_ns);
}

/* One socket for every frame: as the kernel queued them, each with its
 * receive time unless the port asked for none. */
static size_t pp_recv_one(struct port_packet *pp, size_t max, port_rx_fn fn, void *arg)
{
	struct pp_rxq *q = &pp->data;
	int64_t offset = 0; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	size_t n = 0;

	while (!max || n < max) {
		rxq_read(pp, q, max ? max - n : RX_BATCH);
		if (pp->stamps && q->n)
			offset = (int64_t)(ts_ns(CLOCK_REALTIME) - ts_ns(CLOCK_MONOTONIC));
		while (q->pos < q->n) {
			uint64_t rt = pp->stamps ? pp_msg_ts(&q->msgs[q->pos].msg_hdr) : 0;
			rxq_take(&pp->up, q, fn, arg, rt ? (uint64_t)((int64_t)rt - offset) : 0);
			n++;
		}
		if (q->drained_at == q->read_at) /* it came back short */
			break;
	}
	return n;
}

static struct tpacket2_hdr *ring_slot(const struct pp_ring *r)
{
	return (struct tpacket2_hdr *)(r->map + (size_t)r->head * RING_SLOT);
}

/* The ring's next frame, if the kernel has put one there (its length in
 * *len); its first sighting is noted. */
static const uint8_t *ring_peek(struct port_packet *pp, size_t *len)
{
	struct pp_ring *r = &pp->promise;
	struct tpacket2_hdr *h = ring_slot(r);

	if (!(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
		return NULL;
	if (!r->seen_at)
		r->seen_at = ++pp->reads;
	*len = h->tp_snaplen;
	return (const uint8_t *)h + h->tp_mac;
}

/* Hand the ring's next frame (ring_peek found it) to fn and give its slot
 * back to the kernel. */
static void ring_take(struct port_packet *pp, const uint8_t *f, size_t len, port_rx_fn fn,
		      void *arg)
{
	struct pp_ring *r = &pp->promise;
	struct tpacket2_hdr *h = ring_slot(r);

	if (h->tp_snaplen < h->tp_len)
		pp->up.stats.rx_truncated++;
	pp->up.stats.rx_frames++;
	pp->up.stats.rx_bytes += len;
	fn(arg, f, len, 0);
	__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
	r->head = (r->head + 1) % r->slots;
	r->seen_at = 0;
}

/* Whether the socket's next frame goes before the ring's next (pf, plen):
 * its link sequence number is lower, or either has none (a frame without
 * one goes when it is next; the daemon counts it). */
static bool data_first(const struct pp_rxq *d, const uint8_t *pf, size_t plen)
{
	struct wire_promise w;
	uint32_t seq;
	ps_t stamp;

	if (!wire_trailer_get(d->iov[d->pos].iov_base, d->msgs[d->pos].msg_len, &stamp, &seq) ||
	    !wire_promise_get(pf, plen, &w))
		return true;
	return (int32_t)(seq - w.seq) < 0;
}

/* A port to a daemon: its IPv4 frames and its promise frames in the link's
 * order.  A promise goes before the next IPv4 frame read if its number is
 * lower, or when none is read and the socket was found empty after the
 * promise was seen: the link delivers in order, so every frame sent before
 * the promise had been queued by then.  A gap of the kernel's (a full
 * queue or ring) shows in the sequence numbers, as the daemon expects
 * (sequence_gap).  Ends once both were found empty since it began. */
static size_t pp_merge(struct port_packet *pp, size_t max, port_rx_fn fn, void *arg)
{
	struct pp_rxq *d = &pp->data;
	uint64_t begin = pp->reads;
	size_t n = 0;

	while (!max || n < max) {
		size_t plen = 0;
		const uint8_t *pf = ring_peek(pp, &plen);

		if (d->pos < d->n && (!pf || data_first(d, pf, plen))) {
			rxq_take(&pp->up, d, fn, arg, 0);
		} else if (pf && (d->pos < d->n || d->drained_at > pp->promise.seen_at)) {
			ring_take(pp, pf, plen, fn, arg);
		} else if (pf || d->drained_at <= begin) {
			rxq_read(pp, d, RX_BATCH);
			continue;
		} else {
			break;
		}
		n++;
	}
	return n;
}

static size_t pp_recv(struct port *p, size_t max, port_rx_fn fn, void *arg)
{
	struct port_packet *pp = pp_of(p);

	return pp->linked ? pp_merge(pp, max, fn, arg) : pp_recv_one(pp, max, fn, arg);
}

/* Send one frame that the kernel refused with ENOBUFS or EAGAIN. */
static bool pp_retry(struct port_packet *pp, struct msghdr *m)
{
	for (int i = 0; i < TX_RETRIES; i++) {
		pp->up.stats.tx_retries++;
		sched_yield();
		if (sendmsg(pp->tfd, m, 0) >= 0)
			return true;
		if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
			return false;
	}
	return false;
}

static void pp_flush(struct port *p)
{
	struct port_packet *pp = pp_of(p);
	unsigned done = 0;

	while (done < pp->tx_count) {
		int r = sendmmsg(pp->tfd, pp->tx_msgs + done, pp->tx_count - done, 0);
		if (r > 0) {
			for (int i = 0; i < r; i++) {
				p->stats.tx_frames++;
				p->stats.tx_bytes += pp->tx_iov[done + i][1].iov_len;
			}
			done += (unsigned)r;
			continue;
		}
		if (errno == EINTR)
			continue;
		/* The frame at `done` was refused: retry it, or count it. */
		if ((errno == ENOBUFS || errno == EAGAIN) &&
		    pp_retry(pp, &pp->tx_msgs[done].msg_hdr)) {
			p->stats.tx_frames++;
			p->stats.tx_bytes += pp->tx_iov[done][1].iov_len;
		} else {
			p->stats.tx_dropped++;
		}
		done++;
	}
	pp->tx_count = 0;
}

static uint8_t *pp_tx_buf(struct port *p)
{
	struct port_packet *pp = pp_of(p);

	if (pp->tx_count == TX_BATCH)
		pp_flush(p);
	return pp->tx_iov[pp->tx_count][1].iov_base;
}

static void pp_tx_commit(struct port *p, size_t len)
{
	struct port_packet *pp = pp_of(p);

	if (len > pp->up.tx_cap)
		len = pp->up.tx_cap;
	pp->tx_iov[pp->tx_count][1].iov_len = len;
	/* read only by a tfd with virtio headers; little-endian, as on x86 */
	pp->tx_vnet[pp->tx_count].hdr_len = (uint16_t)len;
	pp->tx_count++;
	if (pp->tx_count == TX_BATCH)
		pp_flush(p);
}

static void pp_close(struct port *p)
{
	struct port_packet *pp = pp_of(p);

	if (pp->tfd >= 0)
		pp_flush(p);
	if (pp->tfd >= 0 && pp->tfd != pp->fd)
		close(pp->tfd);
	if (pp->fd >= 0)
		close(pp->fd);
	if (pp->promise.map)
		munmap(pp->promise.map, pp->promise.bytes);
	if (pp->promise.fd >= 0)
		close(pp->promise.fd);
	free(pp->data.bufs);
	free(pp->tx_bufs);
	free(pp);
}

static const struct port_class port_packet_class = {
    .name = "packet",
    .fd = pp_fd,
    .fd2 = pp_fd2,
    .recv = pp_recv,
    .tx_buf = pp_tx_buf,
    .tx_commit = pp_tx_commit,
    .flush = pp_flush,
    .sync_stats = pp_sync_stats,
    .close = pp_close,
};

static bool pp_fail(struct port_packet *pp, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "port %s: %s: %s", pp->up.name, what, strerror(errno));
	return false;
}

/* What one queued frame of up to frame bytes may cost the socket's receive
 * buffer (the kernel's skb truesize): the frame in pages or a kmalloc'd
 * head of the next power of two above it and its headroom, and the
 * sk_buff itself. */
static size_t pp_truesize(size_t frame)
{
	size_t t = 1024;

	while (t < frame + 1024)
		t <<= 1;
	return t + 1024;
}

/* Buffers for a batch of received frames of up to frame bytes. */
static bool rxq_init(struct pp_rxq *q, size_t frame)
{
	q->frame = frame < ETH_ZLEN ? ETH_ZLEN : frame;
	if (!(q->bufs = malloc(RX_BATCH * q->frame)))
		return false;
	for (unsigned i = 0; i < RX_BATCH; i++) {
		q->iov[i].iov_base = q->bufs + i * q->frame;
		q->iov[i].iov_len = q->frame;
		q->msgs[i].msg_hdr.msg_iov = &q->iov[i];
		q->msgs[i].msg_hdr.msg_iovlen = 1;
	}
	return true;
}

/* A socket on the interface that does not see what we send. */
static int pp_socket(struct port_packet *pp, char *err, size_t errlen)
{
	int one = 1, fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return pp_fail(pp, "AF_PACKET socket", err, errlen), -1;
	if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one))) {
		pp_fail(pp, "PACKET_IGNORE_OUTGOING", err, errlen);
		close(fd);
		return -1;
	}
	return fd;
}

/* Bind fd to frames of type proto on the interface (every frame for
 * ETH_P_ALL): it receives nothing before, so its queue starts empty of
 * other interfaces' frames. */
static bool pp_bind(struct port_packet *pp, int fd, int ifindex, int proto, char *err,
		    size_t errlen)
{
	struct sockaddr_ll sll = {
	    .sll_family = AF_PACKET, .sll_protocol = htons(proto), .sll_ifindex = ifindex};

	return !bind(fd, (struct sockaddr *)&sll, sizeof(sll)) || pp_fail(pp, "bind", err, errlen);
}

/* The port's socket, of frames of type proto, holding rx.slots frames of
 * rx.frame_max bytes (pp_truesize) before the kernel drops one.  No
 * PACKET_QDISC_BYPASS: it would also bypass the taps, and tcpdump on a port
 * must see what the daemon sends (mission: tap any link).  Only a frame
 * without a stamp (an external endpoint's) needs its receive time: asked of
 * no socket, the kernel takes none. */
static bool pp_setup_data(struct port_packet *pp, int ifindex, int proto, struct port_rx_size rx,
			  char *err, size_t errlen)
{
	int one = 1;
	size_t bytes = (size_t)(rx.slots ? rx.slots : 1) * pp_truesize(rx.frame_max);
	/* The kernel doubles what it is given. */
	int half = bytes / 2 > INT32_MAX / 2 ? INT32_MAX / 2 : (int)(bytes / 2);

	if ((pp->fd = pp->data.fd = pp_socket(pp, err, errlen)) < 0)
		return false;
	if (setsockopt(pp->fd, SOL_SOCKET, SO_RCVBUFFORCE, &half, sizeof(half)))
		return pp_fail(pp, "SO_RCVBUFFORCE", err, errlen);
	if (pp->stamps && setsockopt(pp->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)))
		return pp_fail(pp, "SO_TIMESTAMPNS", err, errlen);
	return pp_bind(pp, pp->fd, ifindex, proto, err, errlen);
}

/* The promise frames' ring: rx.promise_slots slots, whole pages of them. */
static bool pp_setup_ring(struct port_packet *pp, int ifindex, struct port_rx_size rx, char *err,
			  size_t errlen)
{
	struct pp_ring *r = &pp->promise;
	unsigned per_block = RING_BLOCK / RING_SLOT;
	unsigned blocks = (rx.promise_slots + per_block - 1) / per_block;
	int v = TPACKET_V2;
	struct tpacket_req req = {.tp_block_size = RING_BLOCK,
				  .tp_block_nr = blocks,
				  .tp_frame_size = RING_SLOT,
				  .tp_frame_nr = blocks * per_block};

	if ((r->fd = pp_socket(pp, err, errlen)) < 0)
		return false;
	if (setsockopt(r->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)))
		return pp_fail(pp, "PACKET_VERSION", err, errlen);
	if (setsockopt(r->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)))
		return pp_fail(pp, "PACKET_RX_RING", err, errlen);
	r->slots = req.tp_frame_nr;
	r->bytes = (size_t)RING_BLOCK * blocks;
	r->map = mmap(NULL, r->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		return pp_fail(pp, "mmap of the promise ring", err, errlen);
	}
	return pp_bind(pp, r->fd, ifindex, WIRE_ETHERTYPE_PROMISE, err, errlen);
}

/* A port to a daemon: IPv4 frames in one socket, promise frames in a ring
 * of their own (port_fd2), and a socket to send with (tfd, bound to no
 * type: the kernel reads each frame's from its header). */
static bool pp_setup_linked(struct port_packet *pp, int ifindex, struct port_rx_size rx, char *err,
			    size_t errlen)
{
	int one = 1;

	pp->linked = true;
	if (!pp_setup_data(pp, ifindex, ETH_P_IP, rx, err, errlen) ||
	    !pp_setup_ring(pp, ifindex, rx, err, errlen))
		return false;
	if ((pp->tfd = pp_socket(pp, err, errlen)) < 0)
		return false;
	if (setsockopt(pp->tfd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)))
		return pp_fail(pp, "PACKET_VNET_HDR", err, errlen);
	return pp_bind(pp, pp->tfd, ifindex, 0, err, errlen);
}

/* Each frame's iovecs, its virtio header first where tfd takes one. */
static void pp_init_tx(struct port_packet *pp)
{
	bool vnet = pp->tfd != pp->fd;

	for (unsigned i = 0; i < TX_BATCH; i++) {
		pp->tx_iov[i][0] = (struct iovec){&pp->tx_vnet[i], sizeof(pp->tx_vnet[i])};
		pp->tx_iov[i][1].iov_base = pp->tx_bufs + (size_t)i * pp->up.tx_cap;
		pp->tx_msgs[i].msg_hdr.msg_iov = pp->tx_iov[i] + !vnet;
		pp->tx_msgs[i].msg_hdr.msg_iovlen = vnet ? 2 : 1;
	}
}

struct port *port_packet_open(const char *ifname, struct port_rx_size rx, char *err, size_t errlen)
{
	struct port_packet *pp = calloc(1, sizeof(*pp));
	unsigned ifindex;
	bool ok;

	if (!pp) {
		snprintf(err, errlen, "port %s: out of memory", ifname);
		return NULL;
	}
	pp->up.cls = &port_packet_class;
	pp->stamps = !rx.stamped;
	pp->fd = pp->data.fd = pp->promise.fd = pp->tfd = -1;
	/* Frames in and out are at most rx.frame_max (a promise frame is
	 * Ethernet's minimum), in buffers of whole lines. */
	pp->up.tx_cap = ((rx.frame_max < ETH_ZLEN ? ETH_ZLEN : rx.frame_max) + 63) & ~(size_t)63;
	if (!(pp->tx_bufs = malloc((size_t)TX_BATCH * pp->up.tx_cap)) ||
	    !rxq_init(&pp->data, rx.frame_max)) {
		snprintf(err, errlen, "port %s: out of memory", ifname);
		pp_close(&pp->up);
		return NULL;
	}
	snprintf(pp->up.name, sizeof(pp->up.name), "%s", ifname);
	ifindex = if_nametoindex(ifname);
	if (!ifindex) {
		snprintf(err, errlen, "port %s: no such interface in this namespace", ifname);
		pp_close(&pp->up);
		return NULL;
	}
	ok = rx.promise_slots ? pp_setup_linked(pp, (int)ifindex, rx, err, errlen)
			      : pp_setup_data(pp, (int)ifindex, ETH_P_ALL, rx, err, errlen);
	if (!ok) {
		pp_close(&pp->up);
		return NULL;
	}
	if (pp->tfd < 0)
		pp->tfd = pp->fd;
	pp_init_tx(pp);
	return &pp->up;
}

struct port *port_open(const char *name, struct port_rx_size rx, char *err, size_t errlen)
{
	if (!strncmp(name, "tap:", 4))
		return port_tap_open(name + 4, rx, err, errlen);
	if (!strncmp(name, "dpdk:", 5))
		return port_dpdk_open(name + 5, rx, err, errlen);
	return port_packet_open(name, rx, err, errlen);
}
