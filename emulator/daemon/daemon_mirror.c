/* emulator/daemon/daemon_mirror.c — mirror ports (docs/topology.md, mirror): every
 * frame a switch port sends or receives, copied to the mirror's interface
 * as a tap on that link would see it — the Ethernet frame without the
 * virtual-arrival trailer daemons add between themselves
 * (docs/architecture.md, Stamped frames), and nothing that is not a frame
 * of the link (promise frames stay between daemons).  A copy leaves when
 * the frame crosses the link in virtual time: when it is sent, and when it
 * arrives; the launcher made the interface (m<PORT>, MTU 9,000). */
#include <stdio.h>
#include <string.h>

#include "core/wire.h"
#include "daemon.h"

/* Frames that are the daemons' own business, not the link's. */
#define MIRROR_ETHERTYPE_PROMISE 0x88B5
#define MIRROR_MIN_FRAME	 60 /* Ethernet minimum without FCS */

bool daemon_mirrors_open(struct daemon *d)
{
	char ifname[16], err[512];

	for (int k = 0; k < d->me->nmirrors; k++) {
		int p = d->me->mirrors[k].port;
		snprintf(ifname, sizeof(ifname), "m%d", p);
		/* Output only: what arrives on it is never read. */
		d->ports[p].mirror = port_open(
		    ifname, (struct port_rx_size){16, PORT_MAX_FRAME, true, 0}, err, sizeof(err));
		if (!d->ports[p].mirror) {
			fprintf(stderr, "%s %s: mirror of port %d: %s\n", d->prog, d->me->name, p,
				err);
			return false;
		}
	}
	return true;
}

/* The length of the frame as it is on the wire: an IPv4 frame ends with its
 * datagram (padded to the Ethernet minimum); what follows is a trailer. */
static size_t on_wire_len(const uint8_t *f, size_t len)
{
	size_t end;

	if (len < WIRE_ETH_LEN + WIRE_IPV4_LEN || f[12] != 0x08 || f[13] != 0x00)
		return len;
	end = WIRE_ETH_LEN + ((size_t)f[WIRE_ETH_LEN + 2] << 8 | f[WIRE_ETH_LEN + 3]);
	if (end < MIRROR_MIN_FRAME)
		end = MIRROR_MIN_FRAME;
	return end < len ? end : len;
}

void daemon_mirror(struct daemon_port *port, const uint8_t *frame, size_t len)
{
	uint8_t *buf;

	if (!port->mirror || len < WIRE_ETH_LEN ||
	    (frame[12] << 8 | frame[13]) == MIRROR_ETHERTYPE_PROMISE)
		return;
	if (port->stamped)
		len = on_wire_len(frame, len);
	buf = port_tx_buf(port->mirror);
	memcpy(buf, frame, len);
	port_tx_commit(port->mirror, len);
	/* One frame at a time: a tap shows the link now, not a batch later. */
	port_flush(port->mirror);
}
