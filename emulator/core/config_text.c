/* emulator/core/config_text.c — attributes as text (config.h): the nearest
 * attribute or word to a misspelt one, every value written back in the units
 * it parses from, the `mrcemu attributes` listing built from the registry in
 * config.c, and escaping what a file gave before it reaches an error line. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "config_impl.h"
#include "topology.h"

/* Edit distance, ignoring case, capped: enough to catch a typo. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64];

	if (la >= 63 || lb >= 63)
		return 64;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t sub = diag + (tolower((unsigned char)a[i - 1]) !=
					     tolower((unsigned char)b[j - 1]));
			row[j] = sub < up + 1 ? sub : up + 1;
			row[j] = row[j] < row[j - 1] + 1 ? row[j] : row[j - 1] + 1;
			diag = up;
		}
	}
	return row[lb];
}

const char *config_closest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t best_d = strlen(word) < 5 ? 1 : strlen(word) < 10 ? 2 : 3;

	for (size_t i = 0; i < n; i++) {
		size_t d = distance(word, cands[i]);
		if (d <= best_d && (!best || d < best_d)) {
			best = cands[i];
			best_d = d;
		}
	}
	return best;
}

const char *config_closest_attr(enum attr_scope scope, const char *word)
{
	const char *cands[256];
	size_t n = 0;

	for (const struct attr_def *d = config_attrs; d->name && n < 256; d++)
		if (d->scope == scope)
			cands[n++] = d->name;
	return config_closest(word, cands, n);
}

/* ---- formatting ---- */

/* The largest unit that writes v exactly, so the text parses back to v. */
static void format_units(uint64_t v, const char *const *units, const uint64_t *scales, int n,
			 char *buf, size_t len)
{
	for (int i = n - 1; i >= 0; i--) {
		if (v && v % scales[i] == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", v / scales[i], units[i]);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64 "%s", v, units[0]);
}

static void format_windows(const struct link_attrs *l, char *buf, size_t len)
{
	static const char *const tu[] = {"ps", "ns", "us", "ms", "s"};
	static const uint64_t ts[] = {1, PS_PER_NS, PS_PER_US, PS_PER_MS, PS_PER_S};
	size_t n = 0;
	char a[40], b[40];

	buf[0] = '\0';
	for (int i = 0; i < l->ndown && n < len; i++) {
		format_units(l->down[i].from, tu, ts, 5, a, sizeof a);
		format_units(l->down[i].to, tu, ts, 5, b, sizeof b);
		if (!l->down[i].from) {
			snprintf(a, sizeof a, "0");
		}
		n += snprintf(buf + n, len - n, "%s%s-%s", i ? ", " : "", a, b);
	}
}

char *config_format(const struct attr_def *d, const void *obj, char *buf, size_t len)
{
	static const char *const tu[] = {"ps", "ns", "us", "ms", "s"};
	static const uint64_t ts[] = {1, PS_PER_NS, PS_PER_US, PS_PER_MS, PS_PER_S};
	static const char *const ru[] = {"bps", "Kbps", "Mbps", "Gbps", "Tbps"};
	static const uint64_t rs[] = {1, 1000, 1000000, 1000000000, 1000000000000};
	static const char *const bu[] = {"B", "KiB", "MiB", "GiB"};
	static const uint64_t bs[] = {1, 1 << 10, 1 << 20, 1 << 30};
	const char *p = (const char *)obj + d->offset;
	uint64_t u = 0;
	double f;
	bool b;
	int e;

	if (d->size == 1) {
		u = *(const uint8_t *)p;
	} else if (d->size == 4) {
		uint32_t x;
		memcpy(&x, p, 4);
		u = x;
	} else if (d->size == 8) {
		memcpy(&u, p, 8);
	}
	switch (d->type) {
	case ATTR_BOOL:
		memcpy(&b, p, sizeof b);
		snprintf(buf, len, "%s", b ? "true" : "false");
		break;
	case ATTR_DOUBLE:
		memcpy(&f, p, sizeof f);
		snprintf(buf, len, "%.17g", f);
		break;
	case ATTR_TIME:
		if (config_word_of(d, u) >= 0) {
			snprintf(buf, len, "%s", d->names[config_word_of(d, u)]);
		} else if (!u) {
			snprintf(buf, len, "0");
		} else {
			format_units(u, tu, ts, 5, buf, len);
		}
		break;
	case ATTR_RATE:
		format_units(u, ru, rs, 5, buf, len);
		break;
	case ATTR_BYTES:
		format_units(u, bu, bs, 4, buf, len);
		break;
	case ATTR_IPV4:
		ipv4_format((uint32_t)u, buf, len);
		break;
	case ATTR_ENUM:
		memcpy(&e, p, sizeof e);
		snprintf(buf, len, "%s", d->names[e]);
		break;
	case ATTR_STRING:
		snprintf(buf, len, "%s", p);
		break;
	case ATTR_WINDOWS:
		format_windows((const struct link_attrs *)obj, buf, len);
		break;
	case ATTR_DROPS:
		snprintf(buf, len, "%d rule(s)", ((const struct link_attrs *)obj)->ndrops);
		break;
	default:
		snprintf(buf, len, "%" PRIu64, u);
		break;
	}
	return buf;
}

/* ---- `mrcemu attributes` ---- */

static const char *type_name(const struct attr_def *d)
{
	static const char *const names[] = {
	    [ATTR_BOOL] = "bool",	 [ATTR_U8] = "integer",	   [ATTR_U32] = "integer",
	    [ATTR_U64] = "integer",	 [ATTR_DOUBLE] = "number", [ATTR_TIME] = "time",
	    [ATTR_RATE] = "rate",	 [ATTR_BYTES] = "bytes",   [ATTR_IPV4] = "ipv4",
	    [ATTR_ENUM] = "enum",	 [ATTR_STRING] = "string", [ATTR_WINDOWS] = "windows",
	    [ATTR_DROPS] = "drop rules",
	};
	return names[d->type];
}

/* How a derived default ("" in the registry) comes about. */
static const char *derivation(const struct attr_def *d)
{
	static const struct {
		const char *name, *how;
	} rules[] = {
	    {"ip", "none: every NIC needs its own"},
	    {"TargetQueueDelay", "0.75 x ConfigBaseRTT (1.0 x without TrimmingEnabled)"},
	    {"MaxCongestionWindow", "1.5 x BDP in units of MSS+60"},
	    {"InitialCongestionWindow", "= MaxCongestionWindow"},
	    {"MinCongestionWindow", "1 unit = MSS+60"},
	    {"MaxClosedRecords", "= MaxQps"},
	    {"EgressQueueLimit", "port rate x 5us"},
	    {"down", "none"},
	    {"drop", "none"},
	};
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		if (!strcmp(rules[i].name, d->name)) {
			return rules[i].how;
		}
	}
	return "derived";
}

static void default_text(const struct attr_def *d, char *buf, size_t len)
{
	struct nic_attrs nic;
	struct switch_attrs sw;
	char val[64];
	const void *obj = NULL;

	if (d->def[0]) {
		snprintf(buf, len, "%s", d->def);
		return;
	}
	if (d->scope == ATTR_NIC && d->type != ATTR_IPV4) {
		config_nic_defaults(&nic);
		config_nic_resolve(&nic);
		obj = &nic;
	} else if (d->scope == ATTR_SWITCH) {
		config_switch_defaults(&sw);
		config_nic_defaults(&nic);
		config_switch_resolve(&sw, nic.data_rate);
		obj = &sw;
	}
	if (obj) {
		snprintf(buf, len, "%s = %s at defaults", derivation(d),
			 config_format(d, obj, val, sizeof val));
	} else {
		snprintf(buf, len, "%s", derivation(d));
	}
}

void config_print_attributes(FILE *out)
{
	static const char *const scopes[] = {"emulation", "nic", "switch", "link"};
	char range[200], def[200];

	for (int s = ATTR_EMULATION; s <= ATTR_LINK; s++) {
		fprintf(out, "%s[%s]\n", s ? "\n" : "", scopes[s]);
		for (const struct attr_def *d = config_attrs; d->name; d++) {
			if ((int)d->scope != s) {
				continue;
			}
			config_range_text(d, range, sizeof range);
			default_text(d, def, sizeof def);
			fprintf(out, "  %-30s %-10s [%s]", d->name, type_name(d), def);
			if (d->type != ATTR_STRING && d->type != ATTR_WINDOWS &&
			    d->type != ATTR_DROPS && strcmp(range, "any") &&
			    (d->type != ATTR_BOOL || d->min)) {
				fprintf(out, "  %s: %s", d->type == ATTR_ENUM ? "one of" : "range",
					range);
			}
			fprintf(out, "\n      %s\n", d->doc);
		}
	}
}

void config_escape(char *s, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(s), extra = 0;

	for (size_t i = 0; i < n; i++)
		extra += (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? 3 : 0;
	if (!extra || !cap)
		return;
	/* From the end, so each byte moves once; what does not fit is cut. */
	for (size_t i = n, o = n + extra; i-- > 0;) {
		unsigned char c = (unsigned char)s[i];
		bool ctl = c < 0x20 || c == 0x7f;
		o -= ctl ? 4 : 1;
		char q[4] = {ctl ? '\\' : (char)c, 'x', hex[c >> 4], hex[c & 15]};
		for (size_t k = 0; k < (ctl ? 4u : 1u); k++)
			if (o + k < cap - 1)
				s[o + k] = q[k];
	}
	s[n + extra < cap - 1 ? n + extra : cap - 1] = '\0';
}
