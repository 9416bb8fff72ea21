/* tests/test_launch.c — the launcher's control-socket client
 * (emulator/launch/launch_sys.c): a call answers only for the daemon it
 * names.  A daemon's socket file exists from its bind(); until its
 * listen() a connect is refused, and the launcher, polling for readiness,
 * meets that window under load.  The refused call must leave no descriptor
 * behind: its number is the next socket's, and a later call through it
 * would take another daemon's reply for this one's (a daemon taken as
 * ready before it listens, then `start` refused). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "launch/launch_impl.h"

struct fixture {
	char dir[64];
	char refusing[128]; /* bound, never listening */
	char serving[128];  /* a daemon that answers "ok serving" */
	int refusing_fd;
	pid_t server;
};

static int bind_at(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* The child: one reply line per command line, on every connection. */
static void serve(int lfd)
{
	for (;;) {
		char buf[256];
		int c = accept(lfd, NULL, NULL);
		ssize_t n;

		if (c < 0)
			_exit(0);
		while ((n = read(c, buf, sizeof(buf))) > 0)
			for (ssize_t i = 0; i < n; i++)
				if (buf[i] == '\n' && write(c, "ok serving\n", 11) != 11)
					_exit(1);
		close(c);
	}
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int lfd;

	snprintf(f->dir, sizeof(f->dir), "/tmp/mrct-launch.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->refusing, sizeof(f->refusing), "%s/refusing.ctl", f->dir);
	snprintf(f->serving, sizeof(f->serving), "%s/serving.ctl", f->dir);
	f->refusing_fd = bind_at(f->refusing);
	lfd = bind_at(f->serving);
	assert_int_equal(listen(lfd, 4), 0);
	f->server = fork();
	assert_true(f->server >= 0);
	if (!f->server)
		serve(lfd);
	close(lfd);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	kill(f->server, SIGKILL); /* our own child */
	waitpid(f->server, NULL, 0);
	close(f->refusing_fd);
	unlink(f->refusing);
	unlink(f->serving);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void test_refused_call_leaves_no_descriptor(void **state)
{
	struct fixture *f = *state;
	char reply[LAUNCH_REPLY_MAX];
	int fd = -1;

	assert_false(launch_ctl_call(f->refusing, &fd, "status", reply, sizeof(reply), 1000));
	assert_int_equal(fd, -1);
	assert_non_null(strstr(reply, strerror(ECONNREFUSED)));
}

static void test_a_call_answers_only_for_its_daemon(void **state)
{
	struct fixture *f = *state;
	char reply[LAUNCH_REPLY_MAX];
	int refusing = -1, serving = -1;

	assert_false(launch_ctl_call(f->refusing, &refusing, "status", reply, sizeof(reply), 1000));
	/* The serving daemon's connection takes the lowest free number. */
	assert_true(launch_ctl_call(f->serving, &serving, "status", reply, sizeof(reply), 1000));
	assert_string_equal(reply, "ok serving");
	assert_false(launch_ctl_call(f->refusing, &refusing, "status", reply, sizeof(reply), 1000));
	assert_int_equal(refusing, -1);
	/* And the serving daemon's connection is still its own, still open. */
	assert_true(launch_ctl_call(f->serving, &serving, "status", reply, sizeof(reply), 1000));
	assert_string_equal(reply, "ok serving");
	close(serving);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_refused_call_leaves_no_descriptor, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_a_call_answers_only_for_its_daemon, setup,
					    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
