/* tests/tools/machine-speed.c — how fast this machine is at the things a
 * daemon's frame costs (scripts/bench-fidelity, docs/promises.md, What a
 * frame costs): a kernel entry, a task switch, a page touched for the first
 * time.  On the project's VMs these move by half over an hour, and every
 * wall-clock figure with them; a benchmark prints this line beside its
 * figures so that two of its runs can be told apart by the machine's mood
 * as well as by the code.
 *
 *   machine-speed
 *
 * prints one line: "syscall N ns round trip R us first touch P us/page":
 * a getppid() (the least of 5 runs of 200,000), a round trip of one byte
 * between two processes on one core over two pipes (two task switches and
 * four calls; the least of 5 runs of 5,000), and a page of a fresh 16 MiB
 * anonymous mapping written for the first time (the least of 3).  Exit 0,
 * or 1 with one line on stderr when a call fails. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SYSCALLS     200000
#define ROUND_TRIPS  5000
#define TOUCH_BYTES  (16u << 20)
#define REPEATS	     5
#define TOUCH_REPEAT 3

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int fail(const char *what)
{
	fprintf(stderr, "machine-speed: %s: %m\n", what);
	return 1;
}

/* ns per kernel entry: getppid through syscall(), which glibc never caches. */
static double syscall_ns(void)
{
	double best = 1e18;

	for (int r = 0; r < REPEATS; r++) {
		double t0 = now_ns();
		for (int i = 0; i < SYSCALLS; i++)
			syscall(SYS_getppid);
		double t = (now_ns() - t0) / SYSCALLS;
		best = t < best ? t : best;
	}
	return best;
}

/* Both processes on the core this one runs on, so that each byte is a task
 * switch and not a wake-up of the other core. */
static int pin_here(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* us per round trip of a byte, or a negative value on failure.  Closing
 * its pipe ends the child, whatever happened. */
static double round_trip_us(void)
{
	int to[2], back[2];
	char c = 0;
	double best = 1e18;
	pid_t pid;

	if (pin_here() || pipe(to))
		return -1;
	if (pipe(back) || (pid = fork()) < 0) {
		close(to[0]), close(to[1]);
		return -1;
	}
	if (!pid) {
		close(to[1]);
		close(back[0]);
		while (read(to[0], &c, 1) == 1 && write(back[1], &c, 1) == 1)
			;
		_exit(0);
	}
	close(to[0]);
	close(back[1]);
	for (int r = 0; r < REPEATS && best > 0; r++) {
		double t0 = now_ns();
		for (int i = 0; i < ROUND_TRIPS && best > 0; i++)
			if (write(to[1], &c, 1) != 1 || read(back[0], &c, 1) != 1)
				best = -1;
		double t = (now_ns() - t0) / ROUND_TRIPS / 1e3;
		best = best > 0 && t < best ? t : best;
	}
	close(to[1]);
	close(back[0]);
	waitpid(pid, NULL, 0);
	return best;
}

/* us per page written for the first time, or a negative value. */
static double first_touch_us(void)
{
	long page = sysconf(_SC_PAGESIZE);
	double best = 1e18;

	for (int r = 0; r < TOUCH_REPEAT; r++) {
		char *m = mmap(NULL, TOUCH_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return -1;
		double t0 = now_ns();
		for (size_t off = 0; off < TOUCH_BYTES; off += (size_t)page)
			m[off] = 1;
		double t = (now_ns() - t0) / (TOUCH_BYTES / (double)page) / 1e3;
		best = t < best ? t : best;
		munmap(m, TOUCH_BYTES);
	}
	return best;
}

int main(int argc, char **argv)
{
	double sc, rt, ft;

	if (argc > 1) {
		fprintf(stderr, "usage: %s (no arguments)\n", argv[0]);
		return 2;
	}
	sc = syscall_ns();
	if ((ft = first_touch_us()) < 0)
		return fail("mmap");
	if ((rt = round_trip_us()) < 0)
		return fail("pipe round trip");
	printf("syscall %.0f ns round trip %.2f us first touch %.2f us/page\n", sc, rt, ft);
	return 0;
}
