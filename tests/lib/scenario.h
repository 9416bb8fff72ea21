/* tests/lib/scenario.h — scenario tests: write a topology and a workload,
 * run the real engines in `mrcemu sim` (sim_run), and read the same CSV
 * records a user reads. */
#ifndef TESTS_SCENARIO_H
#define TESTS_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"

/* A CSV record in memory: header names and rows of cells. */
struct table {
	char **cols;
	int ncols;
	char ***rows;
	size_t nrows;
};

struct scenario {
	char dir[256];
	char out[300];
	int rc;
	ps_t until; /* the run's --until, 0 for none */
	struct sim_result r;
	struct table *tables[8];
	char names[8][64];
};

/* Two NICs back to back (h0 10.0.0.1, h1 10.0.0.2) on one link.
 * nic_attrs: extra lines for [nic] ("MSS = 4096\nMonitorEnabled = true");
 * link_attrs: extra lines for [link h0 h1]; workload: CSV rows after the
 * header ("1,0ns,h0,h1,4MiB,\n").  MonitorEnabled, EnableEventLogging and
 * EnableCcTrace are on unless nic_attrs says otherwise. */
struct scenario *scenario_b2b(const char *nic_attrs, const char *link_attrs, const char *workload);
/* The same with extra lines for [nic h0] and [nic h1]. */
struct scenario *scenario_b2b_nodes(const char *nic_attrs, const char *h0_attrs,
				    const char *h1_attrs, const char *link_attrs,
				    const char *workload);
/* Run it; returns sim_run's exit code (also in s->rc). */
int scenario_run(struct scenario *s);
void scenario_free(struct scenario *s);

/* A record of the run ("mrc-monitor.csv"), loaded once. */
const struct table *scenario_table(struct scenario *s, const char *file);

int table_col(const struct table *t, const char *name);
const char *table_cell(const struct table *t, size_t row, const char *col);
uint64_t table_u64(const struct table *t, size_t row, const char *col);

/* A counter's total from a node's last mrc-transport-stats row. */
uint64_t scenario_counter(struct scenario *s, const char *node, const char *counter);

/* A row filter: does row r match? */
typedef bool (*row_pred)(const struct table *t, size_t r, const void *arg);

/* Monitor helpers: rows sent (tx) or received (rx) by a node, of a packet
 * type ("WRITE_MIDDLE", "SACK", "ACK", ... or "DATA" for any write). */
bool monitor_is(const struct table *t, size_t r, const char *node, const char *dir,
		const char *type);
size_t monitor_count(const struct table *t, const char *node, const char *dir, const char *type);
/* The first tx data row of PSN psn with tx_count n, or SIZE_MAX. */
size_t monitor_find_tx(const struct table *t, const char *node, uint32_t psn, unsigned n);

#endif
