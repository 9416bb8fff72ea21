/* emulator/launch/launch_sys.c — the launcher's dealings with the system: iproute2
 * (fork/exec, never a shell string), namespaces, daemon processes, the
 * control-socket client (docs/architecture.md, Daemons). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/records.h"
#include "launch_impl.h"

uint64_t launch_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

bool launch_exe_dir(char *buf, size_t len)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return false;
	exe[n] = '\0';
	if (!(slash = strrchr(exe, '/')))
		return false;
	*slash = '\0';
	return snprintf(buf, len, "%s", exe) < (int)len;
}

bool launch_path_exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* iproute2 lives in /usr/sbin or /sbin, which a user's PATH may lack. */
static const char *ip_path(void)
{
	static const char *const where[] = {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"};

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (access(where[i], X_OK) == 0)
			return where[i];
	return "ip";
}

/* In a child: what it must not inherit from mrcemu. */
static void child_reset(const sigset_t *mask)
{
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
}

static void child_exec_ip(const char *const *argv)
{
	const char *path = ip_path();

	execv(path, (char *const *)argv);
	execvp("ip", (char *const *)argv);
}

static void join_argv(const char *const *argv, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; argv[i] && n + 1 < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "", argv[i]);
}

/* Last non-empty line of what a child wrote, without its newline. */
static void last_line(char *buf)
{
	size_t n = strlen(buf);
	char *p;

	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	p = strrchr(buf, '\n');
	if (p)
		memmove(buf, p + 1, strlen(p + 1) + 1);
}

static bool wait_child(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return false;
	return true;
}

bool launch_ip(const char *const *argv, const sigset_t *mask, char *err, size_t errlen)
{
	char out[1024] = "", cmd[512];
	int fd[2], status;
	ssize_t got;
	size_t n = 0;
	pid_t pid;

	if (pipe2(fd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return false;
	}
	pid = fork();
	if (pid == 0) {
		child_reset(mask);
		dup2(fd[1], 2);
		dup2(fd[1], 1);
		child_exec_ip(argv);
		dprintf(2, "cannot run ip: %s\n", strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	while (pid > 0 && (got = read(fd[0], out + n, sizeof(out) - 1 - n)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		n += (size_t)got;
		if (n == sizeof(out) - 1)
			n = 0; /* keep the end, which names the error */
	}
	out[n] = '\0';
	close(fd[0]);
	join_argv(argv + 1, cmd, sizeof(cmd));
	if (pid < 0 || !wait_child(pid, &status)) {
		snprintf(err, errlen, "ip %s: %s", cmd, strerror(errno));
		return false;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	last_line(out);
	snprintf(err, errlen, "ip %s: %s", cmd, out[0] ? out : "failed");
	return false;
}

static int enter_netns(const char *ns)
{
	char path[LAUNCH_PATH_MAX];
	int fd, rc;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = setns(fd, CLONE_NEWNET);
	close(fd);
	return rc;
}

/* /proc/sys/net shows the namespace of whoever opens it. */
static int write_sysctl(const char *ifname)
{
	char path[256];
	int fd, rc;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", ifname);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1; /* a kernel without IPv6 */
	rc = write(fd, "1\n", 2) == 2 ? 0 : -1;
	close(fd);
	return rc;
}

bool launch_ns_disable_ipv6(const char *ns, const char *const *ifs, int nifs, const sigset_t *mask,
			    char *err, size_t errlen)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		child_reset(mask);
		if (enter_netns(ns) < 0)
			_exit(10);
		if (write_sysctl("all") < 0 || write_sysctl("default") < 0)
			_exit(11);
		for (int i = 0; i < nifs; i++)
			if (write_sysctl(ifs[i]) < 0)
				_exit(12 + (i < 100 ? i : 100));
		_exit(0);
	}
	if (pid < 0 || !wait_child(pid, &status)) {
		snprintf(err, errlen, "namespace %s: %s", ns, strerror(errno));
		return false;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 10)
		snprintf(err, errlen, "namespace %s: cannot enter it", ns);
	else if (WIFEXITED(status) && WEXITSTATUS(status) >= 12)
		snprintf(err, errlen, "namespace %s: cannot disable IPv6 on %s", ns,
			 ifs[WEXITSTATUS(status) - 12]);
	else
		snprintf(err, errlen, "namespace %s: cannot disable IPv6", ns);
	return false;
}

/* The child side of launch_spawn; never returns. */
static void spawn_child(const char *ns, const char *const *argv, const char *log, pid_t parent,
			const sigset_t *mask)
{
	const char *args[64];
	int fd, n = 0;

	child_reset(mask);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(1); /* mrcemu died before the line above */
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		_exit(126);
	dup2(fd, 1);
	dup2(fd, 2);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		dup2(fd, 0);
	if (chdir("/") < 0)
		_exit(126);
	/* `ip netns exec` also gives the daemon a /sys of its namespace. */
	args[n++] = "ip";
	args[n++] = "netns";
	args[n++] = "exec";
	args[n++] = ns;
	for (int i = 0; argv[i] && n < 63; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	child_exec_ip(args);
	dprintf(2, "mrcemu: cannot run ip: %s\n", strerror(errno));
	_exit(127);
}

pid_t launch_spawn(const char *ns, const char *const *argv, const char *log, const sigset_t *mask,
		   char *err, size_t errlen)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid == 0)
		spawn_child(ns, argv, log, parent, mask);
	if (pid < 0)
		snprintf(err, errlen, "fork: %s", strerror(errno));
	else
		setpgid(pid, pid); /* also here, so no ^C races the child's own */
	return pid;
}

static bool ctl_fail(char *reply, size_t len, const char *what, int err)
{
	snprintf(reply, len, "%s: %s", what, strerror(err));
	return false;
}

static bool ctl_connect(const char *sock, int *fd, char *reply, size_t len)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};

	if (strlen(sock) >= sizeof(a.sun_path)) {
		snprintf(reply, len, "%s: path too long", sock);
		return false;
	}
	strcpy(a.sun_path, sock);
	*fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return ctl_fail(reply, len, "socket", errno);
	if (connect(*fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		/* Never left holding the closed number: the next socket the
		 * launcher opens reuses it, and a call through the stale *fd
		 * would talk to that socket's daemon (and close it). */
		close(*fd);
		*fd = -1;
		return ctl_fail(reply, len, sock, e);
	}
	return true;
}

static bool ctl_read_line(int fd, char *reply, size_t len, uint64_t deadline)
{
	size_t n = 0;

	for (;;) {
		uint64_t now = launch_mono_ns();
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int left = now >= deadline ? 0 : (int)((deadline - now) / 1000000 + 1);
		ssize_t got;

		int ready = poll(&p, 1, left);

		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0) {
			snprintf(reply, len, "no reply");
			return false;
		}
		got = recv(fd, reply + n, len - 1 - n, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			snprintf(reply, len,
				 got ? "reading the reply failed" : "closed without a reply");
			return false;
		}
		n += (size_t)got;
		reply[n] = '\0';
		char *nl = memchr(reply, '\n', n);
		if (nl || n == len - 1) {
			if (nl)
				*nl = '\0';
			if (nl > reply && nl[-1] == '\r')
				nl[-1] = '\0';
			return true;
		}
	}
}

static bool ctl_send_line(int fd, const char *line, size_t n, char *reply, size_t len)
{
	size_t off = 0;

	while (off < n) {
		ssize_t sent = send(fd, line + off, n - off, MSG_NOSIGNAL);
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent < 0)
			return ctl_fail(reply, len, "send", errno);
		off += (size_t)sent;
	}
	return true;
}

bool launch_ctl_call(const char *sock, int *fd, const char *cmd, char *reply, size_t len,
		     int timeout_ms)
{
	uint64_t deadline = launch_mono_ns() + (uint64_t)timeout_ms * 1000000ULL;
	bool fresh = *fd < 0;
	char line[1024];
	size_t n;

	n = (size_t)snprintf(line, sizeof(line), "%s\n", cmd);
	if (n >= sizeof(line)) {
		snprintf(reply, len, "command too long");
		return false;
	}
	if (fresh && !ctl_connect(sock, fd, reply, len))
		return false;
	if (ctl_send_line(*fd, line, n, reply, len) && ctl_read_line(*fd, reply, len, deadline))
		return true;
	/* A reply that comes late must never answer the next command. */
	close(*fd);
	*fd = -1;
	return !fresh && launch_ctl_call(sock, fd, cmd, reply, len, timeout_ms);
}

bool launch_ctl_send(const char *sock, const char *cmd, char *reply, size_t len, int timeout_ms)
{
	int fd = -1;
	bool ok = launch_ctl_call(sock, &fd, cmd, reply, len, timeout_ms);

	if (fd >= 0)
		close(fd);
	return ok;
}

/* Finds " key=" (or "key=" after "ok") and returns where its value starts. */
static const char *reply_find(const char *reply, const char *key)
{
	size_t k = strlen(key);

	for (const char *p = reply; (p = strstr(p, key)) != NULL; p += k)
		if ((p == reply || p[-1] == ' ') && p[k] == '=')
			return p + k + 1;
	return NULL;
}

bool launch_reply_u64(const char *reply, const char *key, uint64_t *v)
{
	const char *p = reply_find(reply, key);
	char *end;

	if (!p)
		return false;
	errno = 0;
	*v = strtoull(p, &end, 10);
	return !errno && end != p && (*end == ' ' || *end == '/' || !*end);
}

bool launch_reply_str(const char *reply, const char *key, char *buf, size_t len)
{
	const char *p = reply_find(reply, key);
	size_t n;

	if (!p)
		return false;
	n = strcspn(p, " ");
	snprintf(buf, len, "%.*s", (int)n, p);
	return true;
}

void launch_log_tail(const char *path, int lines, FILE *out)
{
	char buf[4096];
	FILE *f = fopen(path, "re");
	long size, from;
	size_t n;
	int seen = 0;
	char *start;

	if (!f) {
		fprintf(out, "    (no log: %s)\n", strerror(errno));
		return;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	from = size > (long)sizeof(buf) - 1 ? size - (long)sizeof(buf) + 1 : 0;
	fseek(f, from, SEEK_SET);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (!n) {
		fprintf(out, "    (its log %s is empty)\n", path);
		return;
	}
	start = buf + n;
	while (start > buf && seen < lines)
		if (*--start == '\n' && ++seen == lines)
			start++;
	for (char *l = strtok(start, "\n"); l; l = strtok(NULL, "\n"))
		fprintf(out, "    %s\n", l);
}

bool launch_pid_alive(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	bool alive = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) != NULL)
		alive = p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	fclose(f);
	return alive;
}

bool launch_pid_is_daemon(pid_t pid, const char *node, const char *ctl)
{
	char path[64], buf[8192];
	const char *base, *arg, *next;
	bool ours = false, named = false, at = !ctl;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (!n)
		return false;
	base = strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf;
	ours = !strcmp(base, "nicd") || !strcmp(base, "switchd");
	for (arg = buf; arg < buf + n; arg = next) {
		next = arg + strlen(arg) + 1;
		if (next >= buf + n)
			break;
		named = named || (!strcmp(arg, "--node") && !strcmp(next, node));
		at = at || (!strcmp(arg, "--ctl") && !strcmp(next, ctl));
	}
	return ours && named && at && launch_pid_alive(pid);
}

static bool copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;
	bool ok = true;

	if (in < 0)
		return false;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	while (out >= 0 && ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, (size_t)n) == n;
	close(in);
	if (out >= 0)
		close(out);
	return ok && out >= 0;
}

void launch_log_keep(const char *log, const char *outdir, const char *node)
{
	char dir[LAUNCH_PATH_MAX], to[LAUNCH_PATH_MAX + 64];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/log", outdir);
	snprintf(to, sizeof(to), "%s/%s.log", dir, node);
	unlink(to);
	if (log && stat(log, &st) == 0 && st.st_size > 0 && records_mkdir(dir))
		copy_file(log, to);
	rmdir(dir); /* only when empty */
}
