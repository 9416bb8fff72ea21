/* emulator/daemon/daemon_ctl.c — the control socket of a daemon (daemon protocol,
 * Control protocol): a Unix stream socket, mode 0600, one text command a
 * line, one reply line a command, starting with "ok" or "error <reason>". */
#include <errno.h>
#include <ev.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/wire.h"
#include "daemon.h"

/* ---- parsing --------------------------------------------------------------- */

#define CMD_MAX_WORDS 5

static int split(char *s, char **w, int max)
{
	int n = 0;

	for (char *tok = strtok(s, " \t\r"); tok; tok = strtok(NULL, " \t\r")) {
		if (n == max)
			return max + 1;
		w[n++] = tok;
	}
	return n;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end;
}

static bool want(int n, int args, const char *usage, char *err, size_t errlen)
{
	if (n == args + 1)
		return true;
	snprintf(err, errlen, "usage: %s", usage);
	return false;
}

/* start EPOCH SCALE|max [conducted [UNTIL]]: `run`'s launcher conducts a
 * max run, `up`'s conductor any (docs/promises.md, Idle fabrics jump). */
static bool parse_start(char **w, int n, struct daemon_cmd *c, char *err, size_t errlen)
{
	c->conducted = (n == 4 || n == 5) && !strcmp(w[3], "conducted");
	if (!c->conducted &&
	    !want(n, 2, "start EPOCH_NS SCALE|max [conducted [UNTIL_PS]]", err, errlen))
		return false;
	if (n == 5 && (!parse_u64(w[4], &c->until) || !c->until)) {
		snprintf(err, errlen, "start: until '%.40s' is not a virtual time in ps > 0", w[4]);
		return false;
	}
	if (!parse_u64(w[1], &c->epoch_ns) || !c->epoch_ns) {
		snprintf(err, errlen, "start: epoch '%s' is not a CLOCK_MONOTONIC time in ns",
			 w[1]);
		return false;
	}
	if (!strcmp(w[2], "max")) {
		c->scale = 0; /* as fast as the promises allow */
		return true;
	}
	if (!parse_u64(w[2], &c->scale) || !c->scale) {
		snprintf(err, errlen, "start: scale '%s' is not a whole number >= 1 or max", w[2]);
		return false;
	}
	return true;
}

static bool parse_post(char **w, int n, struct daemon_cmd *c, char *err, size_t errlen)
{
	char why[128];

	if (!want(n, 2, "post DST BYTES", err, errlen))
		return false;
	if (strlen(w[1]) >= sizeof(c->dst)) {
		snprintf(err, errlen, "post: no node '%.40s'", w[1]);
		return false;
	}
	snprintf(c->dst, sizeof(c->dst), "%s", w[1]);
	if (!bytes_parse(w[2], &c->bytes, why, sizeof(why))) {
		snprintf(err, errlen, "post: bytes: %s", why);
		return false;
	}
	if (!c->bytes || c->bytes > WIRE_MAX_MSG_BYTES) {
		snprintf(err, errlen,
			 "post: bytes '%.40s' is out of range (allowed: 1..4294967295, 4 GiB - 1: "
			 "RETH's DMA length is 32 bits)",
			 w[2]);
		return false;
	}
	return true;
}

static bool parse_port(char **w, int n, struct daemon_cmd *c, char *err, size_t errlen)
{
	uint64_t v;

	if (!want(n, 2, "port N down|up", err, errlen))
		return false;
	if (!parse_u64(w[1], &v) || v >= TOPO_MAX_PORTS) {
		snprintf(err, errlen, "port: '%.40s' is not a port number", w[1]);
		return false;
	}
	c->port = (int)v;
	if (strcmp(w[2], "down") && strcmp(w[2], "up")) {
		snprintf(err, errlen, "port: '%.40s' (allowed: down, up)", w[2]);
		return false;
	}
	c->down = !strcmp(w[2], "down");
	return true;
}

/* fail DST ID REASON: the launcher relays a failed receive (docs/control.md). */
static bool parse_fail(char **w, int n, struct daemon_cmd *c, char *err, size_t errlen)
{
	if (!want(n, 3, "fail DST ID REASON", err, errlen))
		return false;
	if (strlen(w[1]) >= sizeof(c->dst)) {
		snprintf(err, errlen, "fail: no node '%.40s'", w[1]);
		return false;
	}
	snprintf(c->dst, sizeof(c->dst), "%s", w[1]);
	if (!parse_u64(w[2], &c->msg_id) || !c->msg_id || c->msg_id > WIRE_MAX_MSG_INDEX) {
		snprintf(err, errlen, "fail: id '%.40s' is out of range (allowed: 1..%llu)", w[2],
			 (unsigned long long)WIRE_MAX_MSG_INDEX);
		return false;
	}
	if (strlen(w[3]) >= sizeof(c->reason)) {
		snprintf(err, errlen, "fail: reason '%.40s' is unknown", w[3]);
		return false;
	}
	snprintf(c->reason, sizeof(c->reason), "%s", w[3]);
	return true;
}

bool daemon_cmd_parse(const char *line, struct daemon_cmd *c, char *err, size_t errlen)
{
	char buf[DAEMON_CTL_LINE], *w[CMD_MAX_WORDS];
	int n;

	memset(c, 0, sizeof(*c));
	if (strlen(line) >= sizeof(buf)) {
		snprintf(err, errlen, "line too long");
		return false;
	}
	snprintf(buf, sizeof(buf), "%s", line);
	n = split(buf, w, CMD_MAX_WORDS);
	if (n == 0) {
		snprintf(err, errlen, "empty command");
		return false;
	}
	if (!strcmp(w[0], "stop") && n == 2) {
		c->kind = CMD_STOP;
		if (parse_u64(w[1], &c->end))
			return true;
		snprintf(err, errlen, "stop: T_end '%.40s' is not a virtual time in ps", w[1]);
		return false;
	}
	if (!strcmp(w[0], "status") || !strcmp(w[0], "stats") || !strcmp(w[0], "stop")) {
		c->kind = !strcmp(w[0], "stop")	    ? CMD_STOP
			  : !strcmp(w[0], "status") ? CMD_STATUS
						    : CMD_STATS;
		return want(n, 0, w[0], err, errlen);
	}
	if ((!strcmp(w[0], "grant") || !strcmp(w[0], "hold")) && n == 2) {
		c->kind = !strcmp(w[0], "grant") ? CMD_GRANT : CMD_HOLD;
		if (parse_u64(w[1], &c->grant))
			return true;
		snprintf(err, errlen, "%s: '%.40s' is not a virtual time in ps", w[0], w[1]);
		return false;
	}
	if (!strcmp(w[0], "start")) {
		c->kind = CMD_START;
		return parse_start(w, n, c, err, errlen);
	}
	if (!strcmp(w[0], "post")) {
		c->kind = CMD_POST;
		return parse_post(w, n, c, err, errlen);
	}
	if (!strcmp(w[0], "port")) {
		c->kind = CMD_PORT;
		return parse_port(w, n, c, err, errlen);
	}
	if (!strcmp(w[0], "failures")) {
		c->kind = CMD_FAILURES;
		if (!want(n, 1, "failures FROM", err, errlen))
			return false;
		if (parse_u64(w[1], &c->from))
			return true;
		snprintf(err, errlen, "failures: '%.40s' is not a count", w[1]);
		return false;
	}
	if (!strcmp(w[0], "fail")) {
		c->kind = CMD_FAIL;
		return parse_fail(w, n, c, err, errlen);
	}
	snprintf(err, errlen,
		 "unknown command '%.40s' (allowed: status, start, stats, post, port, "
		 "grant, hold, stop, failures, fail)",
		 w[0]);
	return false;
}

/* ---- executing -------------------------------------------------------------------- */

static const char *state_name(enum daemon_state s)
{
	return s == DAEMON_WAITING ? "waiting" : s == DAEMON_RUNNING ? "running" : "stopping";
}

/* " links=TX:RX,...": frames (stamped and promise) sent and received on
 * each port's link, for the launcher to see that nothing is in flight. */
static void status_links(const struct daemon *d, char *at, size_t len)
{
	int n = snprintf(at, len, " links=");

	for (int i = 0; i < d->nports && n > 0 && (size_t)n < len; i++)
		n += snprintf(at + n, len - (size_t)n, "%s%u:%u", i ? "," : "",
			      d->ports[i].tx_link_seq, d->ports[i].rx_link_seq);
}

static void status(struct daemon *d, char *reply, size_t len)
{
	struct daemon_progress pr = {0};
	int n;

	if (d->eng.progress)
		d->eng.progress(d->eng.ctx, &pr);
	n = snprintf(
	    reply, len,
	    "ok state=%s vt_ps=%llu sends=%llu/%llu receives=%llu/%llu violations=%llu "
	    "late_max_ns=%llu floor_ps=%llu busy_ps=%llu done_ps=%llu idle=%d next_ps=%llu "
	    "ran_ps=%llu rx_failed=%llu epoch_ns=%llu cmds=%llu done_wall_ns=%llu",
	    state_name(d->state), (unsigned long long)daemon_vnow(d),
	    (unsigned long long)pr.sends_finished, (unsigned long long)pr.sends,
	    (unsigned long long)pr.receives_done, (unsigned long long)pr.receives,
	    (unsigned long long)d->violations, (unsigned long long)d->late.max,
	    (unsigned long long)d->floor, (unsigned long long)d->busy_until,
	    (unsigned long long)pr.last_done, daemon_idle(d), (unsigned long long)events_next(d->q),
	    (unsigned long long)(d->ran_any ? d->run_time : 0), (unsigned long long)pr.rx_failed,
	    (unsigned long long)d->vc.epoch_ns, (unsigned long long)d->cmds,
	    (unsigned long long)(d->done_mono > d->vc.epoch_ns ? d->done_mono - d->vc.epoch_ns
							       : 0));
	if (n > 0 && (size_t)n < len)
		status_links(d, reply + n, len - (size_t)n);
}

static void engine_command(struct daemon *d, const struct daemon_cmd *c, char *reply, size_t len)
{
	char text[DAEMON_REPLY_MAX];
	bool ok;

	if (!d->eng.command) {
		snprintf(reply, len, "error %s does not take this command", d->prog);
		return;
	}
	text[0] = 0;
	ok = d->eng.command(d->eng.ctx, c, text, sizeof(text));
	snprintf(reply, len, "%s%s%s", ok ? "ok" : "error", text[0] ? " " : "", text);
}

/* `port N down|up` takes effect at the daemon's command time, so it never
 * contradicts a promise already sent (docs/promises.md). */
struct port_cmd {
	struct daemon *d;
	int port;
	bool down;
};

static void port_set(void *arg, ps_t now)
{
	struct port_cmd *pc = arg;

	(void)now;
	if (pc->d->eng.port_set_down)
		pc->d->eng.port_set_down(pc->d->eng.ctx, pc->port, pc->down);
	free(pc);
}

static bool port_command(struct daemon *d, int port, bool down)
{
	struct port_cmd *pc;

	if (d->state != DAEMON_RUNNING) {
		if (d->eng.port_set_down)
			d->eng.port_set_down(d->eng.ctx, port, down);
		return true;
	}
	if (!(pc = malloc(sizeof(*pc))))
		return false;
	*pc = (struct port_cmd){.d = d, .port = port, .down = down};
	events_schedule(d->q, daemon_cmd_time(d), port_set, pc);
	d->cmds++;
	daemon_advance(d);
	return true;
}

static void stop(struct daemon *d)
{
	d->stop = true;
	d->state = DAEMON_STOPPING;
	if (d->loop)
		ev_break(d->loop, EVBREAK_ALL);
}

/* A refused `post` is answered, logged and counted (posts_refused): a
 * message lost quietly is the one thing a run must never do. */
static void post_refused(struct daemon *d, const char *reply)
{
	d->posts_refused++;
	fprintf(stderr, "%s %s: %s\n", d->prog, d->me->name, reply);
}

void daemon_command(struct daemon *d, const char *line, char *reply, size_t len)
{
	struct daemon_cmd c;
	char err[256];

	if (!daemon_cmd_parse(line, &c, err, sizeof(err))) {
		snprintf(reply, len, "error %s", err);
		if (c.kind == CMD_POST)
			post_refused(d, reply);
		return;
	}
	switch (c.kind) {
	case CMD_STATUS:
		status(d, reply, len);
		return;
	case CMD_GRANT:
		if (daemon_grant(d, c.grant, err, sizeof(err)))
			snprintf(reply, len, "ok");
		else
			snprintf(reply, len, "error %s", err);
		return;
	case CMD_HOLD:
		daemon_hold(d, c.grant);
		status(d, reply, len);
		return;
	case CMD_START:
		if (d->state == DAEMON_WAITING) {
			d->conducted = c.conducted;
			d->until = d->conducted && !c.scale ? c.until : 0;
		}
		if (daemon_start(d, c.epoch_ns, c.scale, err, sizeof(err)))
			snprintf(reply, len, "ok");
		else
			snprintf(reply, len, "error %s", err);
		return;
	case CMD_PORT:
		if (c.port >= d->nports)
			snprintf(reply, len, "error port: %s has no port %d (it has %d)",
				 d->me->name, c.port, d->nports);
		else if (!port_command(d, c.port, c.down))
			snprintf(reply, len, "error port: out of memory");
		else
			snprintf(reply, len, "ok");
		return;
	case CMD_STOP:
		d->end = c.end;
		stop(d);
		snprintf(reply, len, "ok");
		return;
	case CMD_STATS:
	case CMD_FAIL:
		engine_command(d, &c, reply, len);
		return;
	case CMD_FAILURES:
		engine_command(d, &c, reply, len);
		daemon_advance(d); /* promises the engine held may be due */
		return;
	case CMD_POST:
		engine_command(d, &c, reply, len);
		if (!strncmp(reply, "error", 5))
			post_refused(d, reply);
		else
			d->cmds++;
		daemon_advance(d); /* the post is an event at virtual now */
		return;
	}
}

/* ---- the socket ------------------------------------------------------------------ */

/* A client can never stall the event loop nor hold memory without bound
 * (issue: hostile input): replies are queued and sent as the socket takes
 * them; while a client has replies waiting, its further commands wait
 * unread in the kernel; one whose waiting replies pass CTL_OUT_MAX (it
 * sends commands and never reads) is dropped, as is one silent for
 * CTL_IDLE_S, and beyond CTL_MAX_CLIENTS a new connection is told so and
 * closed.  Each drop is logged. */
#define CTL_MAX_CLIENTS 64
#define CTL_OUT_MAX	(4 * (DAEMON_REPLY_MAX + 64))
#define CTL_IDLE_S	60.0 /* unless d->ctl_idle_s says otherwise */

struct daemon_client {
	struct daemon *d;
	int fd;
	ev_io w;
	ev_timer idle;
	char buf[DAEMON_CTL_LINE];
	size_t len;
	bool overflow; /* discarding the rest of a line too long */
	char *out;     /* replies not yet taken by the socket */
	size_t out_len;
	struct daemon_client *next;
};

static unsigned nclients(const struct daemon *d)
{
	unsigned n = 0;

	for (const struct daemon_client *c = d->clients; c; c = c->next)
		n++;
	return n;
}

static void client_close(struct daemon *d, struct daemon_client *c)
{
	struct daemon_client **pp = &d->clients;

	while (*pp && *pp != c)
		pp = &(*pp)->next;
	if (*pp)
		*pp = c->next;
	ev_io_stop(d->loop, &c->w);
	ev_timer_stop(d->loop, &c->idle);
	close(c->fd);
	free(c->out);
	free(c);
}

static void client_drop(struct daemon_client *c, const char *why)
{
	fprintf(stderr, "%s %s: control client dropped: %s\n", c->d->prog, c->d->me->name, why);
	client_close(c->d, c);
}

/* Read commands, or wait to send replies: never both. */
static void client_watch(struct daemon_client *c)
{
	int events = c->out_len ? EV_WRITE : EV_READ;

	if (c->w.events == events)
		return;
	ev_io_stop(c->d->loop, &c->w);
	ev_io_set(&c->w, c->fd, events);
	ev_io_start(c->d->loop, &c->w);
}

/* Send what the socket takes now; false when the client is gone. */
static bool client_flush(struct daemon_client *c)
{
	size_t off = 0;

	while (off < c->out_len) {
		ssize_t r =
		    send(c->fd, c->out + off, c->out_len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r > 0)
			off += (size_t)r;
		else if (r < 0 && errno == EINTR)
			continue;
		else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		else
			return false;
	}
	memmove(c->out, c->out + off, c->out_len - off);
	c->out_len -= off;
	return true;
}

static bool client_queue(struct daemon_client *c, const char *s, size_t n)
{
	if (c->out_len + n > CTL_OUT_MAX) {
		client_drop(c, "its replies are not read");
		return false;
	}
	if (!c->out && !(c->out = malloc(CTL_OUT_MAX))) {
		client_drop(c, "out of memory");
		return false;
	}
	memcpy(c->out + c->out_len, s, n);
	c->out_len += n;
	if (!client_flush(c)) {
		client_close(c->d, c);
		return false;
	}
	return true;
}

static bool client_line(struct daemon_client *c, const char *line)
{
	char reply[DAEMON_REPLY_MAX + 64];
	size_t n;

	daemon_command(c->d, line, reply, sizeof(reply) - 1);
	n = strlen(reply);
	reply[n++] = '\n';
	return client_queue(c, reply, n);
}

/* Complete lines in the buffer, each answered, until replies wait; keeps a
 * partial line.  False when the client is gone. */
static bool client_lines(struct daemon_client *c)
{
	char *nl;

	while (!c->out_len && (nl = memchr(c->buf, '\n', c->len))) {
		size_t used = (size_t)(nl - c->buf) + 1;
		bool ok = true;
		*nl = 0;
		if (c->overflow)
			c->overflow = false;
		else
			ok = client_line(c, c->buf);
		if (!ok)
			return false;
		memmove(c->buf, nl + 1, c->len - used);
		c->len -= used;
	}
	if (c->len == sizeof(c->buf) && !memchr(c->buf, '\n', c->len)) {
		if (!c->overflow && !client_queue(c, "error line too long\n", 20))
			return false;
		c->overflow = true;
		c->len = 0;
	}
	return true;
}

static void client_read(struct daemon_client *c)
{
	ssize_t r = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		client_close(c->d, c);
		return;
	}
	c->len += (size_t)r;
	if (client_lines(c))
		client_watch(c);
}

static void client_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct daemon_client *c = w->data;

	ev_timer_again(loop, &c->idle);
	if (!(revents & EV_WRITE)) {
		client_read(c);
		return;
	}
	if (!client_flush(c)) {
		client_close(c->d, c);
		return;
	}
	/* Replies sent: the lines that waited behind them come next. */
	if (!c->out_len && !client_lines(c))
		return;
	client_watch(c);
}

static void idle_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	client_drop(w->data, "idle too long");
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	static const char full[] = "error too many control clients (allowed: 64)\n";
	struct daemon *d = w->data;
	struct daemon_client *c;
	int fd = accept4(d->ctl_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	(void)revents;
	if (fd < 0)
		return;
	if (nclients(d) >= CTL_MAX_CLIENTS) {
		if (send(fd, full, sizeof(full) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			(void)0; /* the client learns from the closed socket */
		close(fd);
		fprintf(stderr, "%s %s: control client refused: %d already connected\n", d->prog,
			d->me->name, CTL_MAX_CLIENTS);
		return;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		close(fd);
		return;
	}
	c->d = d;
	c->fd = fd;
	c->next = d->clients;
	d->clients = c;
	ev_io_init(&c->w, client_cb, fd, EV_READ);
	c->w.data = c;
	ev_io_start(loop, &c->w);
	ev_init(&c->idle, idle_cb);
	c->idle.repeat = d->ctl_idle_s > 0 ? d->ctl_idle_s : CTL_IDLE_S;
	c->idle.data = c;
	ev_timer_again(loop, &c->idle);
}

static bool ctl_fail(struct daemon *d, const char *what)
{
	fprintf(stderr, "%s %s: control socket %s: %s: %s\n", d->prog, d->me->name, d->ctl_path,
		what, strerror(errno));
	return false;
}

/* A socket file left by a daemon that died is replaced; one that answers
 * belongs to a live daemon and is not. */
static bool ctl_clear(struct daemon *d, const struct sockaddr_un *sa)
{
	struct stat st;
	int fd;

	if (lstat(d->ctl_path, &st))
		return true;
	if (!S_ISSOCK(st.st_mode)) {
		errno = EEXIST;
		return ctl_fail(d, "exists and is not a socket");
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && !connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
		close(fd);
		errno = EADDRINUSE;
		return ctl_fail(d, "another daemon answers there");
	}
	if (fd >= 0)
		close(fd);
	unlink(d->ctl_path);
	return true;
}

static bool ctl_dir(struct daemon *d)
{
	char dir[sizeof(d->ctl_path)], *slash;

	snprintf(dir, sizeof(dir), "%s", d->ctl_path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return true;
	*slash = 0;
	return records_mkdir(dir) || ctl_fail(d, "creating its folder");
}

bool daemon_ctl_open(struct daemon *d)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	ev_io *w;
	mode_t old;
	int rc;

	if (strlen(d->ctl_path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return ctl_fail(d, "path");
	}
	memcpy(sa.sun_path, d->ctl_path, strlen(d->ctl_path) + 1);
	if (!ctl_dir(d) || !ctl_clear(d, &sa))
		return false;
	d->ctl_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (d->ctl_fd < 0)
		return ctl_fail(d, "socket");
	old = umask(0077);
	rc = bind(d->ctl_fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc || chmod(d->ctl_path, 0600) || listen(d->ctl_fd, 16))
		return ctl_fail(d, "bind");
	if (!(w = calloc(1, sizeof(*w))))
		return false;
	d->ctl_watcher = w;
	ev_io_init(w, accept_cb, d->ctl_fd, EV_READ);
	w->data = d;
	ev_io_start(d->loop, w);
	return true;
}

void daemon_ctl_close(struct daemon *d)
{
	while (d->clients)
		client_close(d, d->clients);
	if (d->ctl_watcher) {
		ev_io_stop(d->loop, d->ctl_watcher);
		free(d->ctl_watcher);
		d->ctl_watcher = NULL;
	}
	if (d->ctl_fd >= 0) {
		close(d->ctl_fd);
		unlink(d->ctl_path);
		d->ctl_fd = -1;
	}
}
