/* emulator/core/topology_read.c — reading a topology file (docs/topology.md,
 * Topology file): its lines, with `;` and `#` comments and the line numbers
 * errors cite, its section headers, and each attribute line recorded for
 * topology.c to apply in order; then the command line's --set overrides. */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology_impl.h"

/* "[link h0 s0]" and the like, seen by the line reader before inih. */
static void section_start(struct loader *ld, char *line)
{
	char *close = strchr(line, ']'), *w[4], *save = NULL;
	int n = 0;

	if (!close) {
		loader_fail(ld, ld->line, "section: '%s' has no closing ']'", line);
		return;
	}
	const char *rest = close + 1;
	while (isspace((unsigned char)*rest)) {
		rest++;
	}
	if (*rest && *rest != ';' && *rest != '#') {
		loader_fail(ld, ld->line, "section: text after ']': '%s'", rest);
		return;
	}
	*close = '\0';
	char hdr[256];
	snprintf(hdr, sizeof hdr, "%.200s", line + 1);
	for (char *tok = strtok_r(line + 1, " \t", &save); tok && n < 4;
	     tok = strtok_r(NULL, " \t", &save)) {
		w[n++] = tok;
	}
	if (n == 1 && !strcmp(w[0], "emulation")) {
		loader_add_section(ld, SEC_EMULATION, 0, hdr);
	} else if (n == 1 && !strcmp(w[0], "nic")) {
		loader_add_section(ld, SEC_NIC_DEFAULTS, 0, hdr);
	} else if (n == 1 && !strcmp(w[0], "switch")) {
		loader_add_section(ld, SEC_SWITCH_DEFAULTS, 0, hdr);
	} else if (n == 1 && !strcmp(w[0], "workload")) {
		loader_add_section(ld, SEC_WORKLOAD, 0, hdr);
	} else if (n == 2 && !strcmp(w[0], "nic")) {
		loader_declare_node(ld, hdr, NODE_NIC, w[1]);
	} else if (n == 2 && !strcmp(w[0], "switch")) {
		loader_declare_node(ld, hdr, NODE_SWITCH, w[1]);
	} else if (n == 2 && !strcmp(w[0], "external")) {
		loader_declare_node(ld, hdr, NODE_EXTERNAL, w[1]);
	} else if (n == 3 && !strcmp(w[0], "link")) {
		loader_declare_link(ld, hdr, w[1], w[2]);
	} else {
		static const char *const kinds[] = {"emulation", "nic",	 "switch",
						    "external",	 "link", "workload"};
		const char *near = n ? config_closest(w[0], kinds, 6) : NULL;
		loader_fail(
		    ld, ld->line,
		    "[%s]: unknown section (%s%s%sallowed: emulation, nic, switch, nic NAME, "
		    "switch NAME, external NAME, link A B, workload)",
		    hdr, near ? "did you mean " : "", near ? near : "", near ? "? " : "");
	}
}

/* As inih does: ';' or '#' starts a line comment, " ;" an inline one. */
static void strip_comment(char *p)
{
	if (*p == ';' || *p == '#') {
		*p = '\0';
		return;
	}
	for (char *c = p + 1; *p && *c; c++) {
		if (*c == ';' && isspace((unsigned char)c[-1])) {
			*c = '\0';
			break;
		}
	}
}

/* inih's line reader: counts lines (this libinih's handler gets none), sees
 * section headers (inih reports no section that has no attributes), and drops
 * leading blanks so an indented line is never a continuation line. */
static char *read_line(char *str, int num, void *stream)
{
	struct loader *ld = stream;
	ssize_t n;
	char *p;

	if (ld->failed || (n = getline(&ld->buf, &ld->bufcap, ld->f)) < 0) {
		return NULL;
	}
	ld->line++;
	if (memchr(ld->buf, '\0', (size_t)n)) {
		loader_fail(ld, ld->line, "line: holds a NUL byte (allowed: text)");
		return NULL;
	}
	while (n > 0 && (ld->buf[n - 1] == '\n' || ld->buf[n - 1] == '\r')) {
		ld->buf[--n] = '\0';
	}
	p = ld->buf;
	if (ld->line == 1 && !strncmp(p, "\xEF\xBB\xBF", 3)) {
		p += 3;
	}
	while (isspace((unsigned char)*p)) {
		p++;
	}
	strip_comment(p);
	if (strlen(p) + 2 > (size_t)num) {
		loader_fail(ld, ld->line,
			    "line: too long (allowed: at most %d characters; split "
			    "`drop` or `down` over several lines)",
			    num - 2);
		return NULL;
	}
	if (*p == '[') {
		char copy[256];
		snprintf(copy, sizeof copy, "%s", p);
		section_start(ld, copy);
	}
	snprintf(str, (size_t)num, "%s", p);
	return str;
}

static int on_attribute(void *user, const char *section, const char *name, const char *value)
{
	struct loader *ld = user;

	(void)section;
	if (ld->cur < 0) {
		loader_fail(ld, ld->line,
			    "%s: outside any section (allowed: after [emulation], [nic], "
			    "[switch], [nic NAME], [link A B], ...)",
			    name);
		return 0;
	}
	/* `down`, `drop` and `mirror` add to what is set; anything else given
	 * twice would silently keep the last. */
	for (int i = ld->nkvs - 1; i >= 0 && ld->kvs[i].sec == ld->cur; i--) {
		if (!strcmp(ld->kvs[i].name, name) && strcmp(name, "down") &&
		    strcmp(name, "drop") && strcmp(name, "mirror")) {
			loader_fail(ld, ld->line,
				    "%s: set twice in this section (line %d; allowed: once)", name,
				    ld->kvs[i].line);
			return 0;
		}
	}
	ld->kvs = loader_grow(ld->kvs, ld->nkvs, sizeof *ld->kvs);
	ld->kvs[ld->nkvs++] = (struct kv){ld->cur, ld->line, strdup(name), strdup(value)};
	return 1;
}

void loader_read_file(struct loader *ld)
{
	int rc = ini_parse_stream(read_line, ld, on_attribute, ld);

	if (rc > 0 && !ld->failed) {
		loader_fail(ld, rc, "syntax: expected 'name = value' or '[section]'");
	} else if (rc < 0 && !ld->failed) {
		loader_fail(ld, ld->line, "read: out of memory");
	}
	if (!ld->failed && ferror(ld->f)) {
		loader_fail(ld, ld->line, "read: %s", strerror(errno));
	}
}

/* One `--set SECTION.ATTRIBUTE=VALUE`: its scope, and the attribute and
 * value in buf.  False with the reason in why. */
static bool set_split(const char *text, enum attr_scope *scope, char *buf, size_t len, char **name,
		      char **value, char *why, size_t whylen)
{
	static const char *const sections[] = {"emulation", "nic", "switch", "link"};
	char *dot, *eq;
	const char *near;

	snprintf(buf, len, "%s", text);
	dot = strchr(buf, '.');
	eq = strchr(buf, '=');
	if (!dot || !eq || eq < dot) {
		snprintf(why, whylen, "not SECTION.ATTRIBUTE=VALUE");
		return false;
	}
	*dot = *eq = '\0';
	*name = dot + 1;
	*value = eq + 1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(buf, sections[i])) {
			*scope = (enum attr_scope)i;
			return true;
		}
	near = config_closest(buf, sections, 4);
	snprintf(why, whylen,
		 "unknown section '%.40s' (%s%s%sallowed: emulation, nic, switch, link)", buf,
		 near ? "did you mean " : "", near ? near : "", near ? "? " : "");
	return false;
}

static bool set_one(struct topology *t, struct loader *ld, enum attr_scope scope, const char *name,
		    const char *value, char *why, size_t len)
{
	bool ok = true;

	if (scope == ATTR_NIC && !strcmp(name, "ip")) {
		snprintf(why, len, "ip: is per node (allowed: in [nic NAME])");
		return false;
	}
	switch (scope) {
	case ATTR_EMULATION:
		ok = config_set(scope, &t->emu, name, value, why, len) &&
		     topology_name_check(t->emu.name, true, why, len);
		break;
	case ATTR_NIC:
	case ATTR_SWITCH:
		ok = config_set(scope,
				scope == ATTR_NIC ? (void *)&ld->nic_def : (void *)&ld->sw_def,
				name, value, why, len);
		for (int i = 0; ok && i < t->nnodes; i++) {
			struct topo_node *n = &t->nodes[i];
			if (scope == ATTR_NIC && n->kind != NODE_SWITCH)
				ok = config_set(scope, &n->nic, name, value, why, len);
			else if (scope == ATTR_SWITCH && n->kind == NODE_SWITCH)
				ok = config_set(scope, &n->sw, name, value, why, len);
		}
		break;
	case ATTR_LINK:
		for (int i = 0; ok && i < t->nlinks; i++)
			ok = config_set(scope, &t->links[i].attrs, name, value, why, len);
		break;
	}
	return ok;
}

/* The --set overrides, after the file's own values. */
void loader_apply_sets(struct loader *ld, const char *const *sets, int nsets)
{
	char buf[512], why[256], *name, *value;
	enum attr_scope scope;

	if (nsets > TOPO_MAX_SETS) {
		snprintf(ld->err, ld->errlen, "--set: %d given (allowed: at most %d)", nsets,
			 TOPO_MAX_SETS);
		ld->failed = true;
		return;
	}
	for (int i = 0; i < nsets && !ld->failed; i++) {
		if (set_split(sets[i], &scope, buf, sizeof(buf), &name, &value, why, sizeof(why)) &&
		    set_one(ld->t, ld, scope, name, value, why, sizeof(why)))
			continue;
		snprintf(ld->err, ld->errlen, "--set %.200s: %s", sets[i], why);
		ld->failed = true;
	}
}
