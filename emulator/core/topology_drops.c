/* emulator/core/topology_drops.c — a link's `drop` rules (docs/topology.md):
 * FROM>TO KIND [psn=N] [rtx=0|1] [msn=N] [count=N|all], separated by commas,
 * so a test can lose exactly the frames it names.  A rule matches only what
 * a frame carries on the wire: `tx=1` (the first transmission) is rtx=0;
 * which later transmission a frame is never crosses a wire, so tx=2 and up
 * are refused. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"

static bool drop_option(const char *tok, struct drop_rule *r, char *why, size_t wlen)
{
	static const struct {
		const char *name;
		int64_t min, max;
		size_t off;
	} opts[] = {
	    {"psn", 0, 0xFFFFFF, offsetof(struct drop_rule, psn)},
	    {"rtx", 0, 1, offsetof(struct drop_rule, rtx)},
	    {"msn", 0, 0xFFFFFF, offsetof(struct drop_rule, msn)},
	    {"count", 1, INT32_MAX, offsetof(struct drop_rule, count)},
	};
	const char *eq = strchr(tok, '=');

	if (eq && eq - tok == 2 && !strncmp(tok, "tx", 2)) {
		if (strcmp(eq + 1, "1")) {
			snprintf(why, wlen,
				 "'%s': which transmission a frame is does not travel on the wire "
				 "(allowed: tx=1, the first; rtx=1, any retransmission)",
				 tok);
			return false;
		}
		r->rtx = 0;
		return true;
	}
	for (size_t i = 0; eq && i < sizeof opts / sizeof opts[0]; i++) {
		if (strlen(opts[i].name) != (size_t)(eq - tok) ||
		    strncmp(tok, opts[i].name, (size_t)(eq - tok))) {
			continue;
		}
		int64_t *field = (int64_t *)((char *)r + opts[i].off);
		char *end;
		errno = 0;
		long long v = strtoll(eq + 1, &end, 10);
		if (field == &r->count && !strcmp(eq + 1, "all")) {
			*field = -1;
			return true;
		}
		if (!isdigit((unsigned char)eq[1]) || *end || errno || v < opts[i].min ||
		    v > opts[i].max) {
			snprintf(why, wlen, "'%s' is out of range (allowed: %s=%lld..%lld%s)", tok,
				 opts[i].name, (long long)opts[i].min, (long long)opts[i].max,
				 field == &r->count ? " or all" : "");
			return false;
		}
		*field = v;
		return true;
	}
	snprintf(why, wlen,
		 "unknown option '%s' (allowed: psn=N, rtx=0|1, tx=1, msn=N, count=N|all)", tok);
	return false;
}

static bool drop_endpoint(const struct topology *t, const char *name, int *node, char *why,
			  size_t wlen)
{
	*node = topology_find(t, name);
	if (*node < 0) {
		snprintf(why, wlen, "unknown node '%s' (allowed: a NIC or external)", name);
		return false;
	}
	if (t->nodes[*node].kind == NODE_SWITCH) {
		snprintf(why, wlen,
			 "%s is a switch (allowed: the NIC or external a frame is "
			 "from or to)",
			 name);
		return false;
	}
	return true;
}

/* One rule: FROM>TO KIND [psn=N] [rtx=0|1] [tx=1] [msn=N] [count=N|all]. */
static bool parse_drop(const struct topology *t, char *text, struct drop_rule *r, char *why,
		       size_t wlen)
{
	static const char *const kinds[] = {"data", "ack", "sack", "nack", "probe", "any"};
	char *save = NULL, *tok = strtok_r(text, " \t", &save);
	char *gt = tok ? strchr(tok, '>') : NULL;

	*r = (struct drop_rule){-1, -1, DROP_ANY, -1, -1, -1, 1};
	if (!gt) {
		snprintf(why, wlen, "'%s' is not FROM>TO (e.g. h0>h1 data psn=5)", tok ? tok : "");
		return false;
	}
	*gt = '\0';
	if (!drop_endpoint(t, tok, &r->from_node, why, wlen) ||
	    !drop_endpoint(t, gt + 1, &r->to_node, why, wlen)) {
		return false;
	}
	if (r->from_node == r->to_node) {
		snprintf(why, wlen, "FROM and TO are both %s (allowed: two nodes)", tok);
		return false;
	}
	tok = strtok_r(NULL, " \t", &save);
	int k = -1;
	for (int i = 0; tok && i < 6; i++) {
		k = strcmp(tok, kinds[i]) ? k : i;
	}
	if (k < 0) {
		snprintf(why, wlen,
			 "'%s' is not a kind (allowed: data, ack, sack, nack, probe, any)",
			 tok ? tok : "");
		return false;
	}
	r->kind = (enum drop_kind)k;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		if (!drop_option(tok, r, why, wlen)) {
			return false;
		}
	}
	return true;
}

bool topology_parse_drops(const struct topology *t, const char *text, struct link_attrs *l,
			  char *err, size_t errlen)
{
	char *copy = strdup(text), *save = NULL, why[TOPO_ERR_MAX];
	bool ok = copy != NULL;

	for (char *rule = strtok_r(copy, ",", &save); ok && rule;
	     rule = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*rule)) {
			rule++;
		}
		if (!*rule) {
			continue;
		}
		if (l->ndrops >= LINK_MAX_DROPS) {
			snprintf(err, errlen, "drop: more than %d rules (allowed: at most %d)",
				 LINK_MAX_DROPS, LINK_MAX_DROPS);
			ok = false;
		} else if (!parse_drop(t, rule, &l->drops[l->ndrops], why, sizeof why)) {
			snprintf(err, errlen, "drop: %s", why);
			ok = false;
		} else {
			l->ndrops++;
		}
	}
	free(copy);
	return ok;
}
