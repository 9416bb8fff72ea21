/* emulator/core/outcome.c — see outcome.h. */
#include "outcome.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void outcome_add_nic(struct run_outcome *o, outcome_counter_fn get, const void *nic)
{
	o->data_pkts += get(nic, "tx_data_pkts");
	o->retx_timeout += get(nic, "retx_timeout");
	o->retx_nack += get(nic, "retx_nack");
	o->retx_sack_gap += get(nic, "retx_sack_gap");
	o->rerequests += get(nic, "completion_rerequests");
	o->trims += get(nic, "rx_trimmed");
	o->drops += get(nic, "tx_drop_link_lost") + get(nic, "tx_drop_link_down") +
		    get(nic, "tx_drop_rule") + get(nic, "tx_drop_port_down");
}

void outcome_add_switch(struct run_outcome *o, outcome_counter_fn get, const void *sw)
{
	static const char *const queue[] = {"drop_queue_full", "drop_trim_queue_full", "drop_ttl",
					    "drop_no_route"};
	static const char *const link[] = {"drop_link_lost", "drop_link_down", "drop_link_rule",
					   "drop_port_down", "drop_rx_port_down"};

	o->switch_trims += get(sw, "trimmed");
	for (size_t k = 0; k < sizeof(queue) / sizeof(queue[0]); k++)
		o->switch_drops += get(sw, queue[k]);
	for (size_t k = 0; k < sizeof(link) / sizeof(link[0]); k++)
		o->drops += get(sw, link[k]);
}

static int cmp_ps(const void *a, const void *b)
{
	ps_t x = *(const ps_t *)a, y = *(const ps_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest rank: the p-th percentile of n sorted values is the one of rank
 * ceil(p / 100 * n), 1-based (docs/records.md, The summary).  So with fewer
 * than 100 values p99 is the largest, and p50 of 3 is the middle one. */
static ps_t nearest_rank(const ps_t *sorted, size_t n, unsigned p)
{
	size_t rank = (n * p + 99) / 100;

	return sorted[rank ? rank - 1 : 0];
}

void outcome_fct(struct run_outcome *o, ps_t *fct, size_t n)
{
	if (!n)
		return;
	qsort(fct, n, sizeof(*fct), cmp_ps);
	o->fct_p50 = nearest_rank(fct, n, 50);
	o->fct_p99 = nearest_rank(fct, n, 99);
	o->fct_max = fct[n - 1];
}

void outcome_print(const struct run_outcome *o, FILE *out)
{
	char a[32], b[32], c[32];

	fprintf(out, "messages: %llu of %llu completed", (unsigned long long)o->completed,
		(unsigned long long)o->messages);
	if (o->failed)
		fprintf(out, ", %llu failed", (unsigned long long)o->failed);
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

bool outcome_write_json(const struct run_outcome *o, const char *dir, const char *extra,
			FILE *report)
{
	char path[4200];
	FILE *f;
	int fd;
	bool ok;

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		fprintf(report, "mrcemu: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	fprintf(f,
		"{\n  \"messages\": %llu,\n  \"completed\": %llu,\n  \"failed\": %llu,\n"
		"  \"unverified\": %llu,\n  \"percentiles\": \"nearest-rank\",\n"
		"  \"fct_p50_ps\": %llu,\n  \"fct_p99_ps\": %llu,\n  \"fct_max_ps\": %llu,\n"
		"  \"data_pkts\": %llu,\n  \"retx_timeout\": %llu,\n  \"retx_nack\": %llu,\n"
		"  \"retx_sack_gap\": %llu,\n  \"rerequests\": %llu,\n  \"trims\": %llu,\n"
		"  \"switch_trims\": %llu,\n  \"switch_queue_drops\": %llu,\n"
		"  \"link_drops\": %llu%s%s\n}\n",
		(unsigned long long)o->messages, (unsigned long long)o->completed,
		(unsigned long long)o->failed, (unsigned long long)o->unverified,
		(unsigned long long)o->fct_p50, (unsigned long long)o->fct_p99,
		(unsigned long long)o->fct_max, (unsigned long long)o->data_pkts,
		(unsigned long long)o->retx_timeout, (unsigned long long)o->retx_nack,
		(unsigned long long)o->retx_sack_gap, (unsigned long long)o->rerequests,
		(unsigned long long)o->trims, (unsigned long long)o->switch_trims,
		(unsigned long long)o->switch_drops, (unsigned long long)o->drops,
		extra ? ",\n" : "", extra ? extra : "");
	ok = !ferror(f);
	if (fclose(f) != 0 || !ok) {
		fprintf(report, "mrcemu: %s: write failed\n", path);
		return false;
	}
	return true;
}
