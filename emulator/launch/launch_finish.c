/* emulator/launch/launch_finish.c — the end of a run: the daemons' counters
 * collected, their records merged (launch_merge.c), summary.json and the
 * summary printed as `mrcemu sim` prints it (docs/records.md). */
#include <stdlib.h>
#include <string.h>

#include "launch_run.h"

/* ---- finishing ------------------------------------------------------------------ */

static uint64_t counter(const char *reply, const char *name)
{
	uint64_t v = 0;

	return launch_reply_u64(reply, name, &v) && v != UINT64_MAX ? v : 0;
}

static uint64_t reply_counter(const void *reply, const char *name)
{
	return counter(reply, name);
}

/* The counters of the summary, summed as sim.c sums them (outcome.c). */
static void stats_collect(struct launch *l, struct launch_result *r)
{
	char reply[LAUNCH_REPLY_MAX];

	for (int i = 0; i < l->t->nnodes; i++) {
		if (l->d[i].pid <= 0 || l->d[i].reaped)
			continue;
		if (!launch_ctl_send(l->d[i].ctl, "stats", reply, sizeof(reply), CMD_TIMEOUT_MS) ||
		    strncmp(reply, "ok", 2)) {
			fprintf(l->report,
				"mrcemu: %s: %s did not answer `stats` (%s): the summary "
				"lacks its counters\n",
				l->cmd, l->t->nodes[i].name, reply);
			continue;
		}
		if (l->t->nodes[i].kind == NODE_SWITCH) {
			outcome_add_switch(&r->o, reply_counter, reply);
			continue;
		}
		outcome_add_nic(&r->o, reply_counter, reply); /* failures: from messages.csv */
	}
}

/* OUTDIR/summary.json: the summary's figures, and the emulation's own. */
static void summary_json(const struct launch_result *r, FILE *report)
{
	char extra[512];

	snprintf(extra, sizeof(extra),
		 "  \"virtual_end_ps\": %llu,\n  \"scale\": %llu,\n  \"frames\": %llu,\n"
		 "  \"stamped\": %llu,\n  \"causality_violations\": %llu,\n"
		 "  \"late_p50_ns\": %llu,\n  \"late_p99_ns\": %llu,\n  \"late_max_ns\": %llu",
		 (unsigned long long)r->end, (unsigned long long)r->scale,
		 (unsigned long long)r->frames, (unsigned long long)r->stamped,
		 (unsigned long long)r->violations, (unsigned long long)r->late_p50_ns,
		 (unsigned long long)r->late_p99_ns, (unsigned long long)r->late_max_ns);
	outcome_write_json(&r->o, r->outdir, extra, report);
}

/* The daemons have stopped: their records merged into OUTDIR, with the
 * summary's figures in r and OUTDIR/summary.json. */
static int merge(struct launch *l, struct launch_result *r)
{
	struct launch_lateness lat = {0};

	if (!launch_merge(l->t, &l->w, l->outdir, l->end, &r->o, &lat, l->report))
		return 1;
	r->merged = true;
	launch_chakra_summary(l->t, l->outdir, r->chakra_summary, sizeof(r->chakra_summary));
	r->frames = lat.frames;
	r->stamped = lat.stamped;
	r->violations = lat.violations;
	r->promises = lat.promises;
	r->promise_waits = lat.promise_waits;
	r->wait_ns = lat.wait_ns;
	r->grants = l->grants;
	r->late_p50_ns = lat.late_p50_ns;
	r->late_p99_ns = lat.late_p99_ns;
	r->late_max_ns = lat.late_max_ns;
	summary_json(r, l->report);
	return 0;
}

int launch_finish(struct launch *l, struct launch_result *r)
{
	int rc;

	r->end = l->end ? l->end : launch_virtual_now(l, launch_mono_ns());
	r->run_ns = l->run_ns;
	stats_collect(l, r);
	launch_daemons_stop(l);
	rc = launch_daemons_exits(l);
	if (merge(l, r))
		return 1;
	if (!rc && (r->o.completed < r->o.messages || r->o.unverified))
		rc = launch_fail(
		    l, "%llu of %llu messages did not complete verified (see %s/messages.csv)",
		    (unsigned long long)(r->o.messages - r->o.completed + r->o.unverified),
		    (unsigned long long)r->o.messages, l->outdir);
	return rc;
}

/* SIGINT, SIGTERM or SIGHUP after the start: what the daemons did so far
 * is still merged and summarised, as `mrcemu down` would. */
void launch_finish_interrupted(struct launch *l, struct launch_result *r)
{
	if (!l->clock.epoch_ns || r->merged)
		return;
	r->end = l->end ? l->end : launch_virtual_now(l, launch_mono_ns());
	r->run_ns = l->run_ns;
	stats_collect(l, r);
	launch_daemons_stop(l);
	merge(l, r);
}

double launch_effective_scale(const struct launch_result *r)
{
	return r->end ? (double)r->run_ns / ((double)r->end / (double)PS_PER_NS) : 0.0;
}
void launch_print_summary(const struct launch_result *r, FILE *out)
{
	char a[32], b[32], c[32], d[32];

	outcome_print(&r->o, out);
	fputs(r->chakra_summary, out);
	fprintf(out,
		"causality violations: %llu of %llu stamped frames  lateness: p50 %s  p99 %s  "
		"max %s\n",
		(unsigned long long)r->violations, (unsigned long long)r->stamped,
		time_format(r->late_p50_ns * PS_PER_NS, a, 32),
		time_format(r->late_p99_ns * PS_PER_NS, b, 32),
		time_format(r->late_max_ns * PS_PER_NS, c, 32));
	if (r->violations)
		fprintf(out,
			"warning: %llu frames arrived after their virtual arrival time, which "
			"promises should make impossible: this run may differ from mrcemu sim\n",
			(unsigned long long)r->violations);
	fprintf(out,
		"promises: %llu frames sent (%.1f%% of all frames), %llu waits, %.3f s waited, "
		"%llu idle grants\n",
		(unsigned long long)r->promises,
		r->promises + r->stamped
		    ? 100.0 * (double)r->promises / (double)(r->promises + r->stamped)
		    : 0.0,
		(unsigned long long)r->promise_waits, (double)r->wait_ns / 1e9,
		(unsigned long long)r->grants);
	if (r->scale == LAUNCH_SCALE_MAX)
		snprintf(a, sizeof(a), "max");
	else
		snprintf(a, sizeof(a), "%llu", (unsigned long long)r->scale);
	fprintf(out,
		"virtual time: %s  scale: %s  effective scale: %.0f wall ns per virtual ns  wall: "
		"%.3f s\nrecords: %s/\n",
		time_format(r->end, d, 32), a, launch_effective_scale(r), r->wall_seconds,
		r->outdir);
}
