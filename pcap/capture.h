/* pcap/capture.h — nanosecond pcap files, written through libpcap, with
 * timestamps in virtual time (docs/architecture.md, Records and captures). */
#ifndef PCAP_CAPTURE_H
#define PCAP_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/events.h"
#include "core/time.h"

/* The hosts write a sent frame to its port's pcap when its serialization
 * ends, by an event of this order key: among frames of one picosecond, a
 * NIC's after that picosecond's arrivals (engine order), a switch's before
 * them, the order their pcaps have always had; sim and run agree on it. */
static inline uint64_t capture_sent_key(bool from_nic)
{
	return from_nic ? EVENTS_KEY_ENGINE : 0;
}

struct capture;

/* Open a nanosecond-resolution Ethernet pcap for writing. NULL on error
 * (err filled). */
struct capture *capture_open(const char *path, char *err, size_t errlen);
/* Write one frame stamped with virtual time t; orig_len may exceed len. */
void capture_write(struct capture *c, ps_t t, const uint8_t *frame, size_t len);
void capture_close(struct capture *c);

/* Read a pcap (any resolution): calls fn for every frame with its time in
 * ps.  Returns frames read, or -1 with err filled. */
typedef void (*capture_read_fn)(void *arg, ps_t t, const uint8_t *frame, size_t len);
long capture_read(const char *path, capture_read_fn fn, void *arg, char *err, size_t errlen);

#endif
