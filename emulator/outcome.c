/* emulator/outcome.c — see outcome.h. */
#include "outcome.h"

#include <stdlib.h>

void outcome_add_nic(struct run_outcome *o, outcome_counter_fn get, const void *nic)
{
	o->data_pkts += get(nic, "tx_data_pkts");
	o->retx_timeout += get(nic, "retx_timeout");
	o->retx_nack += get(nic, "retx_nack");
	o->retx_sack_gap += get(nic, "retx_sack_gap");
	o->rerequests += get(nic, "completion_rerequests");
	o->trims += get(nic, "rx_trimmed");
	o->drops += get(nic, "tx_drop_link_lost") + get(nic, "tx_drop_link_down") +
		    get(nic, "tx_drop_rule");
}

void outcome_add_switch(struct run_outcome *o, outcome_counter_fn get, const void *sw)
{
	static const char *const queue[] = {"drop_queue_full", "drop_trim_queue_full", "drop_ttl",
					    "drop_no_route"};
	static const char *const link[] = {"drop_link_lost", "drop_link_down", "drop_link_rule",
					   "drop_port_down"};

	o->switch_trims += get(sw, "trimmed");
	for (size_t k = 0; k < 4; k++) {
		o->switch_drops += get(sw, queue[k]);
		o->drops += get(sw, link[k]);
	}
}

static int cmp_ps(const void *a, const void *b)
{
	ps_t x = *(const ps_t *)a, y = *(const ps_t *)b;
	return x < y ? -1 : x > y;
}

void outcome_fct(struct run_outcome *o, ps_t *fct, size_t n)
{
	if (!n)
		return;
	qsort(fct, n, sizeof(*fct), cmp_ps);
	o->fct_p50 = fct[(n - 1) / 2];
	o->fct_p99 = fct[(n - 1) * 99 / 100];
	o->fct_max = fct[n - 1];
}

void outcome_print(const struct run_outcome *o, FILE *out)
{
	char a[32], b[32], c[32];

	fprintf(out, "messages: %llu of %llu completed", (unsigned long long)o->completed,
		(unsigned long long)o->messages);
	if (o->failed)
		fprintf(out, ", %llu failed (QP error)", (unsigned long long)o->failed);
	if (o->unverified)
		fprintf(out, ", %llu not verified", (unsigned long long)o->unverified);
	fprintf(out, "\ncompletion time: p50 %s  p99 %s  max %s\n", time_format(o->fct_p50, a, 32),
		time_format(o->fct_p99, b, 32), time_format(o->fct_max, c, 32));
	fprintf(out,
		"data packets: %llu  retransmissions: timeout %llu, nack %llu, sack gap %llu; "
		"re-requests %llu\ntrims: %llu (switches %llu)  switch queue drops: %llu  "
		"link drops: %llu\n",
		(unsigned long long)o->data_pkts, (unsigned long long)o->retx_timeout,
		(unsigned long long)o->retx_nack, (unsigned long long)o->retx_sack_gap,
		(unsigned long long)o->rerequests, (unsigned long long)o->trims,
		(unsigned long long)o->switch_trims, (unsigned long long)o->switch_drops,
		(unsigned long long)o->drops);
}
