/* emulator/chakra/chakra_read.c — one rank's Chakra file (docs/chakra.md, Format):
 * the length-delimited stream of a GlobalMetadata then Nodes, each message
 * decoded by protobuf-c from proto/chakra.proto, and the rank's graph
 * checked: known node types, the attributes each type needs, peers that
 * are ranks, dependencies on nodes of the file, no cycle.  Every error is
 * one line naming the file and the node. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra.h"
#include "chakra.pb-c.h"
#include "core/hmap.h"

typedef ChakraProtoMsg__AttributeProto attr_t;

struct reader {
	const char *path;
	int rank, nranks;
	struct chakra_rank *r;
	char *err;
	size_t errlen;
	bool failed;
};

static void rd_fail(struct reader *rd, const struct chakra_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "FILE: node ID (NAME): reason", or "FILE: reason" before any node. */
static void rd_fail(struct reader *rd, const struct chakra_node *n, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (rd->failed)
		return;
	rd->failed = true;
	if (n)
		k = snprintf(rd->err, rd->errlen, "%s: node %" PRIu64 " (%s): ", rd->path, n->id,
			     n->name ? n->name : "");
	else
		k = snprintf(rd->err, rd->errlen, "%s: ", rd->path);
	if (k >= 0 && (size_t)k < rd->errlen) {
		va_start(ap, fmt);
		vsnprintf(rd->err + k, rd->errlen - (size_t)k, fmt, ap);
		va_end(ap);
	}
}

/* ---- the stream -------------------------------------------------------------- */

/* The length prefix of each message: a base-128 varint, low group first,
 * at most 10 bytes.  protobuf-c decodes messages but has no public
 * function for a bare varint, so this is the one hand-written reader of
 * the stream; everything inside a message is protobuf-c's.  Returns the
 * bytes used, 0 when the buffer ends inside the varint, -1 when it is
 * longer than 10 bytes. */
static int read_varint(const uint8_t *p, size_t n, uint64_t *v)
{
	*v = 0;
	for (int i = 0; i < 10; i++) {
		if ((size_t)i == n)
			return 0;
		*v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80))
			return i + 1;
	}
	return -1;
}

static bool slurp(struct reader *rd, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(rd->path, "rbe");
	size_t cap = 0;

	*buf = NULL;
	*len = 0;
	if (!f) {
		rd_fail(rd, NULL, "cannot open: %s", strerror(errno));
		return false;
	}
	for (;;) {
		if (*len == cap) {
			uint8_t *b = realloc(*buf, cap = cap ? 2 * cap : 65536);
			if (!b) {
				rd_fail(rd, NULL, "out of memory");
				break;
			}
			*buf = b;
		}
		size_t got = fread(*buf + *len, 1, cap - *len, f);
		*len += got;
		if (got == 0)
			break;
	}
	if (!rd->failed && ferror(f))
		rd_fail(rd, NULL, "read: %s", strerror(errno));
	fclose(f);
	return !rd->failed;
}

/* Where the next message is: *at its first byte, *msg_len its length.
 * `prev` names the node before it, for errors. */
static bool next_frame(struct reader *rd, const uint8_t *buf, size_t len, size_t *at,
		       uint64_t *msg_len, const struct chakra_node *prev)
{
	int used = read_varint(buf + *at, len - *at, msg_len);
	const char *where = prev ? "the message after this node" : "the first message";

	if (used == 0) {
		rd_fail(rd, prev,
			"%s: its length prefix is cut off by the end of the file (byte %zu)", where,
			*at);
		return false;
	}
	if (used < 0) {
		rd_fail(rd, prev, "%s: its length prefix is longer than 10 bytes (byte %zu)", where,
			*at);
		return false;
	}
	*at += (size_t)used;
	if (*msg_len > len - *at) {
		rd_fail(rd, prev,
			"%s: its length %" PRIu64 " runs past the end of the file (%zu bytes left "
			"at byte %zu)",
			where, *msg_len, len - *at, *at);
		return false;
	}
	return true;
}

/* ---- attributes ----------------------------------------------------------------- */

/* Producers differ in the integer type they use: read any (CHAKRA.md). */
static bool attr_int(const attr_t *a, int64_t *v)
{
	switch (a->value_case) {
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL:
		*v = a->int32_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL:
		*v = a->int64_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL:
		*v = a->uint32_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL:
		*v = a->uint64_val > INT64_MAX ? -1 : (int64_t)a->uint64_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL:
		*v = a->sint32_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL:
		*v = a->sint64_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED32_VAL:
		*v = a->fixed32_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED64_VAL:
		*v = a->fixed64_val > INT64_MAX ? -1 : (int64_t)a->fixed64_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED32_VAL:
		*v = a->sfixed32_val;
		return true;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED64_VAL:
		*v = a->sfixed64_val;
		return true;
	default:
		return false;
	}
}

static const attr_t *attr_find(const ChakraProtoMsg__Node *pn, const char *name)
{
	for (size_t i = 0; i < pn->n_attr; i++)
		if (pn->attr[i]->name && !strcmp(pn->attr[i]->name, name))
			return pn->attr[i];
	return NULL;
}

/* An integer attribute in [lo, hi]; *present says whether it was there. */
static bool get_int(struct reader *rd, const struct chakra_node *n, const ChakraProtoMsg__Node *pn,
		    const char *name, int64_t lo, int64_t hi, int64_t *v, bool *present)
{
	const attr_t *a = attr_find(pn, name);

	*present = a != NULL;
	if (!a)
		return true;
	if (!attr_int(a, v)) {
		rd_fail(rd, n, "%s: not an integer (allowed: any integer type)", name);
		return false;
	}
	if (*v < lo || *v > hi) {
		rd_fail(rd, n,
			"%s: %" PRId64 " is out of range (allowed: %" PRId64 "..%" PRId64 ")", name,
			*v, lo, hi);
		return false;
	}
	return true;
}

static bool need_int(struct reader *rd, const struct chakra_node *n, const ChakraProtoMsg__Node *pn,
		     const char *name, int64_t lo, int64_t hi, int64_t *v)
{
	bool present;

	if (!get_int(rd, n, pn, name, lo, hi, v, &present))
		return false;
	if (!present)
		rd_fail(rd, n, "%s: missing (a %s node needs it)", name, chakra_type_name(n->type));
	return present;
}

/* CollectiveAlgorithm on a COMM_COLL node: "ring", "direct" or "tree". */
static bool node_algo(struct reader *rd, struct chakra_node *n, const ChakraProtoMsg__Node *pn)
{
	static const char *const names[] = {"", "ring", "direct", "tree"};
	const attr_t *a = attr_find(pn, "CollectiveAlgorithm");

	if (!a)
		return true;
	if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL)
		for (int i = 1; i < 4; i++)
			if (!strcmp(a->string_val, names[i])) {
				n->algo = (enum chakra_algo)i;
				return true;
			}
	rd_fail(rd, n, "CollectiveAlgorithm: not one of ring, direct, tree");
	return false;
}

/* The attributes each type needs (docs/chakra.md, Attributes); every other
 * attribute is ignored. */
static void node_attrs(struct reader *rd, struct chakra_node *n, const ChakraProtoMsg__Node *pn)
{
	int64_t v = 0;
	bool present;

	if (!get_int(rd, n, pn, "comm_size", 0, 1LL << 40, &v, &present))
		return;
	n->bytes = (uint64_t)v;
	switch (n->type) {
	case CHAKRA_SEND:
	case CHAKRA_RECV:
		if (!need_int(rd, n, pn, n->type == CHAKRA_SEND ? "comm_dst" : "comm_src", 0,
			      CHAKRA_MAX_RANKS - 1, &v))
			return;
		n->peer = (int)v;
		if (n->peer >= rd->nranks || n->peer == rd->rank) {
			rd_fail(rd, n, "%s: rank %d (allowed: another rank, 0..%d)",
				n->type == CHAKRA_SEND ? "comm_dst" : "comm_src", n->peer,
				rd->nranks - 1);
			return;
		}
		if (!get_int(rd, n, pn, "comm_tag", 0, INT64_MAX, &v, &present))
			return;
		n->tag = present ? (uint64_t)v : 0;
		break;
	case CHAKRA_COLL:
		if (!need_int(rd, n, pn, "comm_type", 0, CHAKRA_BARRIER, &v))
			return;
		n->coll = (enum chakra_coll)v;
		if (!get_int(rd, n, pn, "comm_root", 0, rd->nranks - 1, &v, &present))
			return;
		n->root = present ? (int)v : 0;
		node_algo(rd, n, pn);
		break;
	case CHAKRA_COMP:
		if (pn->duration_micros > UINT64_MAX / PS_PER_US)
			rd_fail(rd, n, "duration_micros: %" PRIu64 " is out of range",
				pn->duration_micros);
		n->duration = pn->duration_micros * PS_PER_US;
		break;
	default:
		break;
	}
}

/* ---- nodes ------------------------------------------------------------------------ */

static bool copy_deps(struct reader *rd, struct chakra_node *n, const ChakraProtoMsg__Node *pn)
{
	size_t k = pn->n_ctrl_deps + pn->n_data_deps;

	if (k > UINT32_MAX) {
		rd_fail(rd, n, "too many dependencies");
		return false;
	}
	n->deps = malloc((k ? k : 1) * sizeof(*n->deps));
	if (!n->deps) {
		rd_fail(rd, n, "out of memory");
		return false;
	}
	if (pn->n_ctrl_deps) /* memcpy takes no NULL, even for 0 bytes */
		memcpy(n->deps, pn->ctrl_deps, pn->n_ctrl_deps * sizeof(*n->deps));
	if (pn->n_data_deps)
		memcpy(n->deps + pn->n_ctrl_deps, pn->data_deps,
		       pn->n_data_deps * sizeof(*n->deps));
	n->ndeps = (uint32_t)k;
	return true;
}

static bool add_node(struct reader *rd, const ChakraProtoMsg__Node *pn, uint32_t *cap)
{
	struct chakra_rank *r = rd->r;
	struct chakra_node *n;

	if (r->nnodes == *cap) {
		uint32_t c = *cap ? 2 * *cap : 64;
		struct chakra_node *v = realloc(r->nodes, c * sizeof(*v));
		if (!v) {
			rd_fail(rd, NULL, "out of memory");
			return false;
		}
		r->nodes = v;
		*cap = c;
	}
	n = &r->nodes[r->nnodes++];
	memset(n, 0, sizeof(*n));
	n->id = pn->id;
	n->name = strdup(pn->name ? pn->name : "");
	n->type = (enum chakra_type)pn->type;
	if (!n->name) {
		rd_fail(rd, n, "out of memory");
		return false;
	}
	if ((int)pn->type < CHAKRA_METADATA || (int)pn->type > CHAKRA_COLL) {
		rd_fail(rd, n, "type %d is not a node type (allowed: 1 METADATA .. 7 COMM_COLL)",
			(int)pn->type);
		return false;
	}
	node_attrs(rd, n, pn);
	return !rd->failed && copy_deps(rd, n, pn);
}

/* The GlobalMetadata, then every Node to the end of the file. */
static void read_stream(struct reader *rd, const uint8_t *buf, size_t len)
{
	size_t at = 0;
	uint64_t n;
	uint32_t cap = 0;

	if (!len) {
		rd_fail(rd, NULL, "empty (allowed: a GlobalMetadata, then nodes)");
		return;
	}
	if (!next_frame(rd, buf, len, &at, &n, NULL))
		return;
	ChakraProtoMsg__GlobalMetadata *gm =
	    chakra_proto_msg__global_metadata__unpack(NULL, n, buf + at);
	if (!gm) {
		rd_fail(rd, NULL, "the first message (byte %zu) is not a Chakra GlobalMetadata",
			at);
		return;
	}
	chakra_proto_msg__global_metadata__free_unpacked(gm, NULL);
	at += n;
	while (at < len && !rd->failed) {
		const struct chakra_node *prev =
		    rd->r->nnodes ? &rd->r->nodes[rd->r->nnodes - 1] : NULL;
		if (!next_frame(rd, buf, len, &at, &n, prev))
			return;
		ChakraProtoMsg__Node *pn = chakra_proto_msg__node__unpack(NULL, n, buf + at);
		if (!pn) {
			rd_fail(rd, prev, "the %s (byte %zu) is not a Chakra Node",
				prev ? "message after this node" : "second message", at);
			return;
		}
		add_node(rd, pn, &cap);
		chakra_proto_msg__node__free_unpacked(pn, NULL);
		at += n;
	}
}

/* ---- the graph ---------------------------------------------------------------------- */

/* Ids unique; every dependency a node of the file, as its index. */
static void resolve_deps(struct reader *rd)
{
	struct chakra_rank *r = rd->r;
	struct hmap by_id;

	hmap_init(&by_id);
	for (uint32_t i = 0; i < r->nnodes && !rd->failed; i++) {
		struct chakra_node *n = &r->nodes[i];
		if (hmap_get(&by_id, n->id))
			rd_fail(rd, n, "id %" PRIu64 " is used twice in the file", n->id);
		else if (!hmap_put(&by_id, n->id, (void *)(uintptr_t)(i + 1)))
			rd_fail(rd, n, "out of memory");
	}
	for (uint32_t i = 0; i < r->nnodes && !rd->failed; i++) {
		struct chakra_node *n = &r->nodes[i];
		for (uint32_t k = 0; k < n->ndeps && !rd->failed; k++) {
			uintptr_t j = (uintptr_t)hmap_get(&by_id, n->deps[k]);
			if (!j)
				rd_fail(rd, n,
					"depends on node %" PRIu64 ", which is not in the file",
					n->deps[k]);
			n->deps[k] = j - 1;
		}
	}
	hmap_destroy(&by_id);
}

/* Kahn's algorithm; what it cannot order lies on or after a cycle, and
 * walking dependencies among those from any of them reaches one on it. */
static void check_cycles(struct reader *rd)
{
	struct chakra_rank *r = rd->r;
	uint32_t *left = calloc(r->nnodes + 1, sizeof(*left));
	uint32_t *queue = malloc((r->nnodes + 1) * sizeof(*queue));
	uint32_t *first = calloc(r->nnodes + 2, sizeof(*first));
	uint32_t *out = NULL, head = 0, tail = 0, edges = 0;

	for (uint32_t i = 0; i < r->nnodes; i++)
		edges += r->nodes[i].ndeps;
	out = malloc((edges + 1) * sizeof(*out));
	if (!left || !queue || !first || !out) {
		rd_fail(rd, NULL, "out of memory");
		goto out;
	}
	/* Dependents of each node, in one array (counting sort). */
	for (uint32_t i = 0; i < r->nnodes; i++)
		for (uint32_t k = 0; k < r->nodes[i].ndeps; k++)
			first[r->nodes[i].deps[k] + 2]++;
	for (uint32_t i = 0; i < r->nnodes; i++)
		first[i + 2] += first[i + 1];
	for (uint32_t i = 0; i < r->nnodes; i++) {
		left[i] = r->nodes[i].ndeps;
		for (uint32_t k = 0; k < r->nodes[i].ndeps; k++)
			out[first[r->nodes[i].deps[k] + 1]++] = i;
		if (!left[i])
			queue[tail++] = i;
	}
	while (head < tail) {
		uint32_t i = queue[head++];
		for (uint32_t e = first[i]; e < first[i + 1]; e++)
			if (--left[out[e]] == 0)
				queue[tail++] = out[e];
	}
	for (uint32_t i = 0; i < r->nnodes && tail < r->nnodes; i++) {
		if (!left[i])
			continue;
		/* Walk r->nnodes steps back along unfinished dependencies: then
		 * we stand on the cycle. */
		uint32_t j = i;
		for (uint32_t step = 0; step < r->nnodes; step++)
			for (uint32_t k = 0; k < r->nodes[j].ndeps; k++)
				if (left[r->nodes[j].deps[k]]) {
					j = (uint32_t)r->nodes[j].deps[k];
					break;
				}
		rd_fail(rd, &r->nodes[j], "depends on itself through a cycle of dependencies");
		break;
	}
out:
	free(left);
	free(queue);
	free(first);
	free(out);
}

bool chakra_read(const char *path, int rank, int nranks, struct chakra_rank *r, char *err,
		 size_t errlen)
{
	struct reader rd = {
	    .path = path, .rank = rank, .nranks = nranks, .r = r, .err = err, .errlen = errlen};
	uint8_t *buf;
	size_t len;

	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->rank = rank;
	if (slurp(&rd, &buf, &len))
		read_stream(&rd, buf, len);
	free(buf);
	if (!rd.failed)
		resolve_deps(&rd);
	if (!rd.failed)
		check_cycles(&rd);
	return !rd.failed;
}
