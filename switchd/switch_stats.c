/* switchd/switch_stats.c — the switch engine's records and counters
 * (switch.h): switch-stats.csv rows per port and class at every interval
 * and at the end, samples, the engine's own invariants (sw_check), and the
 * counters exported by name for stats, the control socket and tests. */
#include "switch_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/invariant.h"

static const char *const drop_names[SW_DROP_COUNT] = {
    "queue_full", "trim_queue_full", "ttl",	  "no_route",	  "port_down",
    "link_lost",  "link_down",	     "link_rule", "rx_port_down", "no_memory",
};

/* ---- records and counters ------------------------------------------------ */

/* One class's queue against its counts. */
static const char *check_class(const struct sw_port *port, int tc, char *why, size_t len)
{
	const struct sw_class *k = &port->cls[tc];
	const struct sw_queue *q = &k->q;
	uint64_t bytes = 0;

	for (uint32_t i = 0; i < q->n; i++)
		bytes += q->ring[(q->head + i) & (q->cap - 1)].len;
	if (bytes != q->bytes)
		snprintf(why, len, "port %d tc %d: queue_bytes %llu, frames queued %llu",
			 sw_port_index(port), tc, (unsigned long long)q->bytes,
			 (unsigned long long)bytes);
	else if (k->c.enqueued - k->c.dequeued != q->n || k->c.dequeued > k->c.enqueued)
		snprintf(why, len, "port %d tc %d: enqueued %llu - dequeued %llu, queued %u",
			 sw_port_index(port), tc, (unsigned long long)k->c.enqueued,
			 (unsigned long long)k->c.dequeued, q->n);
	else if (!(port->nonempty >> tc & 1) != !q->n)
		snprintf(why, len, "port %d tc %d: nonempty bit, queued %u", sw_port_index(port),
			 tc, q->n);
	else if (q->bytes > port->limit + port->limit / 2 || q->bytes > k->peak)
		snprintf(why, len,
			 "port %d tc %d: queue_bytes %llu past 1.5 x limit %llu or peak %u",
			 sw_port_index(port), tc, (unsigned long long)q->bytes,
			 (unsigned long long)port->limit, k->peak);
	else
		return NULL;
	return why;
}

const char *sw_check(const struct sw *sw, char *why, size_t len)
{
	const char *r = NULL;

	for (int i = 0; !r && i < sw->nports; i++)
		for (int tc = 0; !r && tc < sw->ntc; tc++)
			r = check_class(&sw->ports[i], tc, why, len);
	return r;
}

static void check_all(const struct sw *sw)
{
	char why[160];

	(void)sw;
	(void)why;
	INVARIANT_HOLDS(sw_check(sw, why, sizeof(why)));
}

static bool class_active(const struct sw_port *port, int tc)
{
	return memcmp(&port->cls[tc].c, &port->last[tc], sizeof(port->cls[tc].c)) ||
	       port->cls[tc].q.bytes;
}

static void stats_row(struct sw *sw, struct sw_port *port, int tc, ps_t now)
{
	struct csv *c = sw->stats;
	const struct sw_counters *t = &port->cls[tc].c, *l = &port->last[tc];

	csv_u64(c, now);
	csv_str(c, sw->name);
	csv_u64(c, (uint64_t)sw_port_index(port));
	csv_str(c, port->peer_name);
	csv_u64(c, (uint64_t)tc);
#define SW_COUNTER_CELL(f) csv_u64(c, t->f - l->f);
	SW_COUNTER_FIELDS(SW_COUNTER_CELL)
#undef SW_COUNTER_CELL
	csv_u64(c, port->cls[tc].peak_ivl);
	csv_u64(c, port->cls[tc].q.bytes);
	for (int d = 0; d < SW_DROP_COUNT; d++)
		csv_u64(c, t->drops[d] - l->drops[d]);
	csv_end(c);
	port->last[tc] = *t;
	port->cls[tc].peak_ivl = (uint32_t)port->cls[tc].q.bytes;
	sw_class_peaks_low(&port->cls[tc]);
}

static void stats_rows(struct sw *sw, ps_t now, bool final)
{
	for (int i = 0; i < sw->nports; i++) {
		struct sw_port *port = &sw->ports[i];
		for (int tc = 0; tc < sw->ntc; tc++)
			if (final ? sw_class_seen(&port->cls[tc]) : class_active(port, tc))
				stats_row(sw, port, tc, now);
	}
}

void sw_stats_tick(void *arg, ps_t now)
{
	struct sw *sw = arg;

	sw_settle(sw);
	check_all(sw);
	stats_rows(sw, now, false);
	events_schedule(sw->ev, now + sw->a.stats_interval, sw_stats_tick, sw);
}

/* samples.csv (emulator/host/samples.h): every port and class that ever saw
 * traffic, its queue now and its peak since the last sample, and its
 * totals of trims, drops and ECN marks. */
void sw_sample(struct sw *sw, struct csv *c, ps_t now)
{
	sw_settle(sw);
	for (int i = 0; i < sw->nports; i++) {
		struct sw_port *port = &sw->ports[i];
		for (int tc = 0; tc < sw->ntc; tc++) {
			struct sw_class *k = &port->cls[tc];
			uint64_t dropped = 0;
			if (!sw_class_seen(k))
				continue;
			for (int d = 0; d < SW_DROP_COUNT; d++)
				dropped += k->c.drops[d];
			csv_u64(c, now);
			csv_str(c, sw->name);
			csv_str(c, "queue");
			csv_u64(c, (uint64_t)sw_port_index(port));
			csv_u64(c, (uint64_t)tc);
			csv_str(c, port->peer_name);
			csv_u64(c, k->q.bytes);
			csv_u64(c, k->peak_sample);
			csv_u64(c, k->c.trimmed);
			csv_u64(c, dropped);
			csv_u64(c, k->c.ecn_marked);
			for (int e = 0; e < 7; e++) /* the NIC and group columns */
				csv_str(c, "");
			csv_end(c);
			k->peak_sample = (uint32_t)k->q.bytes;
			sw_class_peaks_low(k);
		}
	}
}

void sw_finish(struct sw *sw, ps_t now)
{
	sw_settle(sw);
	check_all(sw);
	if (sw->stats)
		stats_rows(sw, now, true);
}

/* A port and class's counters, in the order of switch-stats.csv's columns:
 * the fields, max_queue_bytes (the class's peak), drop_<reason>. */
enum { SW_CLASS_PEAK = SW_NFIELDS, SW_CLASS_COUNTERS = SW_NFIELDS + 1 + SW_DROP_COUNT };

static const char *class_counter_name(size_t k)
{
	static const char *const fields[] = {
#define SW_COUNTER_NAME(f) #f,
	    SW_COUNTER_FIELDS(SW_COUNTER_NAME)
#undef SW_COUNTER_NAME
	};
	static char drops[SW_DROP_COUNT][32];

	if (k < SW_NFIELDS)
		return fields[k];
	if (k == SW_CLASS_PEAK)
		return "max_queue_bytes";
	k -= SW_CLASS_PEAK + 1;
	if (!drops[k][0])
		snprintf(drops[k], sizeof(drops[k]), "drop_%s", drop_names[k]);
	return drops[k];
}

static uint64_t class_counter(const struct sw_port *port, int tc, size_t k)
{
	const struct sw_counters *c = &port->cls[tc].c;
	const uint64_t fields[] = {
#define SW_COUNTER_VALUE(f) c->f,
	    SW_COUNTER_FIELDS(SW_COUNTER_VALUE)
#undef SW_COUNTER_VALUE
	};

	if (k < SW_NFIELDS)
		return fields[k];
	if (k == SW_CLASS_PEAK)
		return port->cls[tc].peak;
	return c->drops[k - SW_CLASS_PEAK - 1];
}

/* The whole switch's counters: rx_frames, each class counter over every
 * port and class (summed; max_queue_bytes the peak of any queue),
 * rx_drop_payload_not_pattern, rx_drop_no_memory, rx_drop_<wire reason>. */
enum {
	SW_AT_CLASS = 1,
	SW_AT_PAYLOAD = SW_AT_CLASS + SW_CLASS_COUNTERS,
	SW_AT_NO_MEMORY,
	SW_AT_WIRE
};

static const char *rx_drop_name(enum wire_error e)
{
	static char names[WIRE_ERROR_COUNT][48];

	if (!names[e][0])
		snprintf(names[e], sizeof(names[e]), "rx_drop_%s", wire_error_name(e));
	return names[e];
}

static uint64_t class_total(const struct sw *sw, size_t k)
{
	uint64_t sum = 0;

	for (int i = 0; i < sw->nports; i++)
		for (int tc = 0; tc < sw->ntc; tc++) {
			uint64_t v = class_counter(&sw->ports[i], tc, k);
			sum = k == SW_CLASS_PEAK ? (v > sum ? v : sum) : sum + v;
		}
	return sum;
}

/* The name of the switch's counter i, NULL past the last. */
static const char *counter_name(size_t i)
{
	if (i == 0)
		return "rx_frames";
	if (i < SW_AT_PAYLOAD)
		return class_counter_name(i - SW_AT_CLASS);
	if (i == SW_AT_PAYLOAD)
		return "rx_drop_payload_not_pattern";
	if (i == SW_AT_NO_MEMORY)
		return "rx_drop_no_memory";
	if (i - SW_AT_WIRE + 1 < WIRE_ERROR_COUNT) /* WIRE_OK is no drop */
		return rx_drop_name((enum wire_error)(i - SW_AT_WIRE + 1));
	return NULL;
}

/* Its value: a class counter's walks every port and class, so names are
 * matched first (counter_name) and values made only when asked for. */
static uint64_t counter_value(const struct sw *sw, size_t i)
{
	if (i == 0)
		return sw->rx_frames;
	if (i < SW_AT_PAYLOAD)
		return class_total(sw, i - SW_AT_CLASS);
	if (i == SW_AT_PAYLOAD)
		return sw->rx_drop_payload;
	if (i == SW_AT_NO_MEMORY)
		return sw->rx_drop_no_memory;
	return sw->rx_drop_wire[i - SW_AT_WIRE + 1];
}

bool sw_counter_at(const struct sw *sw, size_t i, struct counter *c)
{
	const char *name = counter_name(i);

	if (name)
		*c = (struct counter){name, counter_value(sw, i)};
	return name != NULL;
}

uint64_t sw_counter(const struct sw *sw, const char *name)
{
	const char *n;

	for (size_t i = 0; (n = counter_name(i)); i++)
		if (!strcmp(n, name))
			return counter_value(sw, i);
	return UINT64_MAX;
}

uint64_t sw_port_counter(const struct sw *sw, int port, int tc, const char *name)
{
	const char *n;

	for (size_t i = 0; (n = counter_name(i)); i++)
		if (!strcmp(n, name) && (i < SW_AT_CLASS || i >= SW_AT_PAYLOAD))
			return counter_value(sw, i); /* per switch */
	if (port < 0 || port >= sw->nports || tc < 0 || tc >= SW_NUM_TC)
		return UINT64_MAX;
	/* A class the switch does not keep never carries traffic: zero. */
	for (size_t k = 0; k < SW_CLASS_COUNTERS; k++)
		if (!strcmp(class_counter_name(k), name))
			return tc < sw->ntc ? class_counter(&sw->ports[port], tc, k) : 0;
	return UINT64_MAX;
}

const char *sw_stats_header(void)
{
	static char header[1024];
	size_t n;

	if (header[0])
		return header;
	n = (size_t)snprintf(header, sizeof(header), "time_ps,node,port,peer,tc");
	for (size_t k = 0; k < SW_CLASS_COUNTERS; k++)
		n +=
		    (size_t)snprintf(header + n, sizeof(header) - n, ",%s%s", class_counter_name(k),
				     k == SW_CLASS_PEAK ? ",queue_bytes" : "");
	return header;
}

uint64_t sw_queue_bytes(const struct sw *sw, int port, int tc)
{
	if (port < 0 || port >= sw->nports || tc < 0 || tc >= sw->ntc)
		return 0;
	return sw->ports[port].cls[tc].q.bytes;
}

uint64_t sw_queue_limit(const struct sw *sw, int port)
{
	return port < 0 || port >= sw->nports ? 0 : sw->ports[port].limit;
}
