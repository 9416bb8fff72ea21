/* emulator/launch/report.c — runs scripts/report (report.h). */
#include "report.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"

#define PYTHON "/usr/bin/python3"

/* The script, relative to the folder mrcemu is in: build/ and build/asan/
 * in the source tree, bin/ once installed. */
static bool script_find(char *path, size_t len)
{
	static const char *const rel[] = {"../scripts/report", "../../scripts/report",
					  "../share/mrcemu/report"};
	char exe[PATH_MAX];

	if (!launch_exe_dir(exe, sizeof(exe)))
		return false;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(path, len, "%s/%s", exe, rel[i]);
		if (access(path, R_OK) == 0)
			return true;
	}
	return false;
}

int report_write(const char *outdir, const char *other, const char *page_dir, bool quiet, FILE *err)
{
	char script[PATH_MAX + 64];
	const char *argv[10];
	int n = 0, status;
	pid_t pid;

	if (!script_find(script, sizeof(script))) {
		fprintf(err, "mrcemu report: scripts/report not found beside mrcemu\n");
		return 1;
	}
	if (access(PYTHON, X_OK) < 0) {
		fprintf(err, "mrcemu report: %s: %s (install python3-matplotlib)\n", PYTHON,
			strerror(errno));
		return 1;
	}
	argv[n++] = PYTHON;
	argv[n++] = script;
	if (page_dir) {
		argv[n++] = "-o";
		argv[n++] = page_dir;
	}
	if (quiet)
		argv[n++] = "-q";
	argv[n++] = outdir;
	if (other)
		argv[n++] = other;
	argv[n] = NULL;
	fflush(NULL);
	if ((pid = fork()) < 0) {
		fprintf(err, "mrcemu report: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		execv(PYTHON, (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (!WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status) == 2 ? 2 : WEXITSTATUS(status) ? 1 : 0;
}
