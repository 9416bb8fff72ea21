/* tests/test_capture.c — nanosecond pcap files in virtual time
 * (docs/architecture.md, Records and captures), written and read through
 * libpcap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pcap/capture.h"

struct seen {
	int n;
	ps_t t[4];
	size_t len[4];
	uint8_t first[4];
};

static void note(void *arg, ps_t t, const uint8_t *frame, size_t len)
{
	struct seen *s = arg;

	if (s->n < 4) {
		s->t[s->n] = t;
		s->len[s->n] = len;
		s->first[s->n] = frame[0];
	}
	s->n++;
}

static void test_write_read(void **state)
{
	char path[] = "/tmp/test_capture_XXXXXX";
	static uint8_t frame[70000];
	uint8_t head[4];
	char err[256] = "";
	struct seen s = {0};
	struct capture *c;
	FILE *f;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	c = capture_open(path, err, sizeof err);
	assert_non_null(c);
	frame[0] = 1;
	capture_write(c, 0, frame, 60);
	frame[0] = 2;
	capture_write(c, 83480, frame, 4170); /* seed: 4,174 bytes at 400 Gbps */
	frame[0] = 3;
	capture_write(c, 3 * PS_PER_S + 123456789ULL * PS_PER_NS + 999, frame, sizeof frame);
	capture_close(c);

	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(head, 1, 4, f), 4);
	fclose(f);
	/* nanosecond pcap magic a1b23c4d, written in host (little-endian) order */
	assert_int_equal(head[0] | head[1] << 8 | head[2] << 16 | (uint32_t)head[3] << 24,
			 0xa1b23c4du);

	assert_int_equal(capture_read(path, note, &s, err, sizeof err), 3);
	assert_int_equal(s.t[0], 0);
	assert_int_equal(s.t[1], 83000); /* stamped in whole ns */
	assert_int_equal(s.t[2], 3 * PS_PER_S + 123456789ULL * PS_PER_NS);
	assert_int_equal(s.len[0], 60);
	assert_int_equal(s.len[1], 4170);
	assert_int_equal(s.len[2], 65535); /* the snap length */
	assert_int_equal(s.first[0], 1);
	assert_int_equal(s.first[1], 2);
	assert_int_equal(s.first[2], 3);
	unlink(path);
}

static void test_errors(void **state)
{
	char err[256] = "";
	struct seen s = {0};

	(void)state;
	assert_null(capture_open("/nonexistent-dir/x.pcap", err, sizeof err));
	assert_true(strlen(err) > 0);
	err[0] = 0;
	assert_int_equal(capture_read("/nonexistent-dir/x.pcap", note, &s, err, sizeof err), -1);
	assert_true(strlen(err) > 0);
	assert_int_equal(s.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_write_read),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
