/* emulator/chakra/chakra_write.c — writing Chakra files (chakra.h): messages
 * packed by protobuf-c, each preceded by its length as a base-128 varint
 * (docs/chakra.md, Format). */
#include <errno.h>
#include <stdlib.h>

#include "chakra.h"
#include "chakra.pb-c.h"

typedef ChakraProtoMsg__AttributeProto attr_t;

/* The length prefix: protobuf-c packs messages but has no public varint
 * encoder for a bare length, so these few lines write it. */
bool chakra_write_raw(FILE *f, const uint8_t *msg, size_t len)
{
	uint8_t v[10];
	size_t n = 0;
	uint64_t x = len;

	do {
		v[n++] = (uint8_t)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
		x >>= 7;
	} while (x);
	return fwrite(v, 1, n, f) == n && fwrite(msg, 1, len, f) == len;
}

static bool write_packed(FILE *f, const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = malloc(len ? len : 1);
	bool ok = buf && protobuf_c_message_pack(m, buf) == len && chakra_write_raw(f, buf, len);

	free(buf);
	return ok;
}

FILE *chakra_write_open(const char *path)
{
	ChakraProtoMsg__GlobalMetadata gm = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
	FILE *f = fopen(path, "wbe");

	gm.version = "0.0.4";
	if (f && !write_packed(f, &gm.base)) {
		fclose(f);
		errno = EIO;
		return NULL;
	}
	return f;
}

static void int_attr(attr_t *a, const char *name, int64_t v)
{
	chakra_proto_msg__attribute_proto__init(a);
	a->name = (char *)name;
	a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
	a->int64_val = v;
}

bool chakra_write_node(FILE *f, const struct chakra_spec *s)
{
	ChakraProtoMsg__Node n = CHAKRA_PROTO_MSG__NODE__INIT;
	attr_t a[4], *ap[4];
	size_t na = 0;

	n.id = s->id;
	n.name = (char *)(s->name ? s->name : "");
	n.type = (ChakraProtoMsg__NodeType)s->type;
	n.ctrl_deps = (uint64_t *)s->deps;
	n.n_ctrl_deps = s->ndeps;
	n.duration_micros = s->duration_us;
	if (s->type == CHAKRA_SEND || s->type == CHAKRA_RECV || s->type == CHAKRA_COLL)
		int_attr(&a[na++], "comm_size", (int64_t)s->bytes);
	if (s->type == CHAKRA_SEND || s->type == CHAKRA_RECV) {
		int_attr(&a[na++], s->type == CHAKRA_SEND ? "comm_dst" : "comm_src", s->peer);
		int_attr(&a[na++], "comm_tag", (int64_t)s->tag);
	}
	if (s->type == CHAKRA_COLL)
		int_attr(&a[na++], "comm_type", s->coll);
	for (size_t i = 0; i < na; i++)
		ap[i] = &a[i];
	n.attr = ap;
	n.n_attr = na;
	return write_packed(f, &n.base);
}
