/* tests/tools/run-cost.c — what one run of a program costs, counted the
 * same way for mrcemu and for the simulators it is compared with
 * (scripts/bench-scale): the CPU of the whole process, from its exec to its
 * exit, loading, set-up and teardown included.
 *
 *   run-cost OUT CMD [ARG...]
 *
 * runs CMD with its standard output in OUT and its standard error in
 * OUT.err, and prints one line: "CPU_S PEAK_KIB WALL_S", the user + system
 * CPU seconds to the microsecond and the peak resident KiB as wait4 gives
 * them, and the wall seconds from fork to exit.  This tool forks CMD
 * itself, and is small, so that the peak is CMD's: a child forked from a
 * large process (python) inherits its resident size until its exec, and
 * wait4 reports that instead.  Exit status: CMD's (128 + N when killed by
 * signal N); 2 with one line on stderr for bad arguments or a failed fork,
 * exec or open (127 when CMD cannot be run). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval tv)
{
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* In the child: OUT and OUT.err as standard output and error, then CMD. */
static void child(const char *out, char **cmd)
{
	char err[4096];
	int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	snprintf(err, sizeof err, "%s.err", out);
	int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o < 0 || e < 0 || dup2(o, STDOUT_FILENO) < 0 || dup2(e, STDERR_FILENO) < 0) {
		perror("run-cost: OUT");
		_exit(2);
	}
	execvp(cmd[0], cmd);
	fprintf(stderr, "run-cost: %s: %s\n", cmd[0], strerror(errno));
	_exit(127);
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: run-cost OUT CMD [ARG...]\n");
		return 2;
	}
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0) {
		perror("run-cost: fork");
		return 2;
	}
	if (pid == 0)
		child(argv[1], argv + 2);
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("run-cost: wait4");
		return 2;
	}
	printf("%.6f %ld %.3f\n", seconds(ru.ru_utime) + seconds(ru.ru_stime), ru.ru_maxrss,
	       now() - t0);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
