/* emulator/launch/launch_manifest.c — what an emulation created, written down as
 * it creates it, so that `mrcemu down`, `down --stale` and `list` act on
 * that and nothing else, even after the launcher was killed with SIGKILL.
 *
 * The manifest is LAUNCH_RUN_ROOT/<name>/manifest, a text file of one
 * "key value..." line each, appended and flushed before (or, for a pid,
 * right after) the thing it names is made:
 *
 *   mrcemu-manifest 1
 *   name default              mode run|up
 *   topology /abs/file.ini    outdir /abs/out/default
 *   scale 2000                started 1767225600 (Unix seconds)
 *   owner alice               launcher PID STARTTIME (from /proc/PID/stat)
 *   nodes 3
 *   netns mrc-default-h0      one per namespace
 *   link mrc-default-h0 p0 mrc-default-s0 p0
 *   file h0.ctl               one per file in the run folder
 *   daemon h0 nicd PID        one per daemon started
 *   detached                  `up` finished: the daemons outlive it
 *
 * The run folder itself is made with mkdir(2), never reused: whoever makes
 * it owns the name, so two `up`s of one name cannot undo each other. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "launch_impl.h"

#define MANIFEST_MAGIC "mrcemu-manifest 1"

/* Field 22 of /proc/PID/stat: when the process started, in clock ticks
 * since boot; with the pid it names one process, even after pid reuse. */
unsigned long long launch_pid_starttime(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu",
			 &start) != 1)
		return 0;
	return start;
}

/* Who asked: the user behind sudo, else the uid's name. */
static void owner_name(char *buf, size_t len)
{
	const char *sudo = getenv("SUDO_USER");
	struct passwd *pw;

	if (sudo && *sudo && strlen(sudo) < 32 && !strpbrk(sudo, " \t\n"))
		snprintf(buf, len, "%s", sudo);
	else if ((pw = getpwuid(getuid())) != NULL)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "uid%u", (unsigned)getuid());
}

FILE *launch_manifest_create(const char *rundir, const char *name, const char *mode,
			     const char *topology, const char *outdir, uint64_t scale, int nodes)
{
	char path[LAUNCH_PATH_MAX], owner[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", rundir, LAUNCH_MANIFEST);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	owner_name(owner, sizeof(owner));
	fprintf(f,
		MANIFEST_MAGIC "\nname %s\nmode %s\ntopology %s\noutdir %s\nscale %llu\n"
			       "started %lld\nowner %s\nlauncher %d %llu\nnodes %d\n",
		name, mode, topology, outdir, (unsigned long long)scale, (long long)time(NULL),
		owner, (int)getpid(), launch_pid_starttime(getpid()), nodes);
	if (fflush(f) != 0) {
		fclose(f);
		return NULL;
	}
	return f;
}

bool launch_manifest_add(FILE *f, const char *fmt, ...)
{
	va_list ap;

	if (!f)
		return false;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	return fflush(f) == 0;
}

static char *dup_or_die(const char *s, bool *ok)
{
	char *d = strdup(s);

	*ok = *ok && d;
	return d;
}

static bool push(char ***v, int *n, const char *s)
{
	char **nv = realloc(*v, (size_t)(*n + 1) * sizeof(**v));
	bool ok = true;

	if (!nv)
		return false;
	*v = nv;
	nv[*n] = dup_or_die(s, &ok);
	*n += ok;
	return ok;
}

/* One line into m; unknown keys are skipped (a newer mrcemu's manifest). */
static bool manifest_line(struct launch_manifest *m, char *line)
{
	char *key = line, *val = strchr(line, ' ');
	char node[TOPO_NAME_MAX + 1], prog[16];
	int pid;

	if (val)
		*val++ = '\0';
	else
		val = line + strlen(line);
	if (!strcmp(key, "name"))
		snprintf(m->name, sizeof(m->name), "%s", val);
	else if (!strcmp(key, "mode"))
		m->detachable = !strcmp(val, "up");
	else if (!strcmp(key, "topology"))
		snprintf(m->topology, sizeof(m->topology), "%s", val);
	else if (!strcmp(key, "outdir"))
		snprintf(m->outdir, sizeof(m->outdir), "%s", val);
	else if (!strcmp(key, "scale"))
		m->scale = strtoull(val, NULL, 10);
	else if (!strcmp(key, "started"))
		m->started = strtoll(val, NULL, 10);
	else if (!strcmp(key, "owner"))
		snprintf(m->owner, sizeof(m->owner), "%s", val);
	else if (!strcmp(key, "launcher"))
		sscanf(val, "%d %llu", &m->launcher, &m->launcher_start);
	else if (!strcmp(key, "nodes"))
		m->nodes = atoi(val);
	else if (!strcmp(key, "detached"))
		m->detached = true;
	else if (!strcmp(key, "netns"))
		return push(&m->netns, &m->nnetns, val);
	else if (!strcmp(key, "file"))
		return push(&m->files, &m->nfiles, val);
	else if (!strcmp(key, "daemon") && sscanf(val, "%31s %15s %d", node, prog, &pid) == 3 &&
		 pid > 1) {
		struct launch_manifest_daemon *d =
		    realloc(m->daemons, (size_t)(m->ndaemons + 1) * sizeof(*d));
		if (!d)
			return false;
		m->daemons = d;
		d += m->ndaemons++;
		memcpy(d->node, node, strlen(node) + 1); /* %31s: it fits */
		d->pid = pid;
	}
	return true;
}

/* Only what we could have written: a name, and files without '/'. */
static bool manifest_sane(const struct launch_manifest *m, const char *name)
{
	char why[160];

	if (strcmp(m->name, name) || !topology_name_check(m->name, true, why, sizeof(why)))
		return false;
	for (int i = 0; i < m->nfiles; i++)
		if (strchr(m->files[i], '/') || !strcmp(m->files[i], "..") ||
		    !strcmp(m->files[i], "."))
			return false;
	for (int i = 0; i < m->nnetns; i++)
		if (strchr(m->netns[i], '/') || strncmp(m->netns[i], "mrc-", 4))
			return false;
	return true;
}

int launch_manifest_read(const char *name, struct launch_manifest *m)
{
	char path[LAUNCH_PATH_MAX], line[LAUNCH_PATH_MAX];
	bool ok = true;
	FILE *f;
	int fd;

	memset(m, 0, sizeof(*m));
	snprintf(m->rundir, sizeof(m->rundir), "%s/%s", LAUNCH_RUN_ROOT, name);
	if (snprintf(path, sizeof(path), "%s/%s", m->rundir, LAUNCH_MANIFEST) >= (int)sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		return -1;
	}
	if (!fgets(line, sizeof(line), f) || strncmp(line, MANIFEST_MAGIC, strlen(MANIFEST_MAGIC)))
		ok = false;
	while (ok && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ok = manifest_line(m, line);
	}
	fclose(f);
	if (!ok || !manifest_sane(m, name)) {
		launch_manifest_free(m);
		return -1;
	}
	return 1;
}

void launch_manifest_free(struct launch_manifest *m)
{
	for (int i = 0; i < m->nnetns; i++)
		free(m->netns[i]);
	for (int i = 0; i < m->nfiles; i++)
		free(m->files[i]);
	free(m->netns);
	free(m->files);
	free(m->daemons);
	m->netns = m->files = NULL;
	m->daemons = NULL;
	m->nnetns = m->nfiles = m->ndaemons = 0;
}

bool launch_manifest_launcher_alive(const struct launch_manifest *m)
{
	return m->launcher > 1 && launch_pid_alive(m->launcher) &&
	       launch_pid_starttime(m->launcher) == m->launcher_start;
}

int launch_manifest_daemons_alive(const struct launch_manifest *m)
{
	char ctl[LAUNCH_PATH_MAX];
	int n = 0;

	for (int i = 0; i < m->ndaemons; i++) {
		if (snprintf(ctl, sizeof(ctl), "%s/%s.ctl", m->rundir, m->daemons[i].node) >=
		    (int)sizeof(ctl))
			continue; /* not a socket we made */
		n += launch_pid_is_daemon(m->daemons[i].pid, m->daemons[i].node, ctl);
	}
	return n;
}

/* A `run` whose launcher is gone, or an `up` whose daemons all are (or
 * whose launcher died before it finished). */
bool launch_manifest_stale(const struct launch_manifest *m)
{
	if (launch_manifest_launcher_alive(m))
		return false;
	return !m->detached || launch_manifest_daemons_alive(m) == 0;
}

/* Every name with a run folder under LAUNCH_RUN_ROOT, sorted. */
int launch_manifest_names(char ***names)
{
	DIR *dir = opendir(LAUNCH_RUN_ROOT);
	struct dirent *e;
	int n = 0;
	char why[160];

	*names = NULL;
	while (dir && (e = readdir(dir)) != NULL)
		if (topology_name_check(e->d_name, true, why, sizeof(why)) &&
		    !push(names, &n, e->d_name))
			break;
	if (dir)
		closedir(dir);
	for (int i = 1; i < n; i++) /* few: insertion sort */
		for (int k = i; k > 0 && strcmp((*names)[k - 1], (*names)[k]) > 0; k--) {
			char *x = (*names)[k];
			(*names)[k] = (*names)[k - 1];
			(*names)[k - 1] = x;
		}
	return n;
}

void launch_names_free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The files the manifest lists, the manifest, the folder, and the root
 * when no other emulation uses it.  Anything else in the folder stays (and
 * keeps the folder). */
void launch_manifest_remove_files(const struct launch_manifest *m)
{
	char path[LAUNCH_PATH_MAX + 64];

	for (int i = 0; i < m->nfiles; i++) {
		snprintf(path, sizeof(path), "%s/%s", m->rundir, m->files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/%s", m->rundir, LAUNCH_MANIFEST);
	unlink(path);
	rmdir(m->rundir);
	rmdir(LAUNCH_RUN_ROOT);
}
