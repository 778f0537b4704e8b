/* pam_nfskeys: one login puts every key of the three filesystems in place, as [PAM] in
 * nfskeys.conf says: a Kerberos TGT in KEYRING:persistent:<uid> (NFS sec=krb5, CIFS
 * sec=krb5 through nfskeys-upcall-spnego, and what AFS tokens are made from), CIFS logon
 * keys for listed servers and domains, AFS tokens for listed cells.  The password is taken
 * once from PAM (never from argv or the environment), the keys are made by a child that
 * has become the user (so they are the user's, in the session keyring pam_keyinit made),
 * and a failure is logged without the secret and fails the login only if configured. */
#define PAM_SM_AUTH
#define PAM_SM_SESSION
#define PAM_SM_PASSWORD
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>

#include "become-user.h"
#include "macros.h"
#include "nfskeys.h"

#define PAM_EXPORT __attribute__((visibility("default")))

/* the systemd user timer that runs 'nfskeys nfs renew' hourly */
#define RENEW_TIMER "nfskeys-nfs-renew.timer"

struct opts {
	const char *config; /* config=FILE */
	bool debug;
	bool renew; /* renew: enable the user's renewal timer once the TGT is there */
};

static void parse_args(int argc, const char **argv, struct opts *o)
{
	*o = (struct opts){ 0 };
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "config=", 7))
			o->config = argv[i] + 7;
		else if (streq(argv[i], "debug"))
			o->debug = true;
		else if (streq(argv[i], "renew"))
			o->renew = true;
	}
}

static void log_none(void *userdata, int priority, const char *file, int line, const char *fn,
		     const char *format, va_list args)
{
}

struct job {
	pam_handle_t *pamh;
	struct nfskeys_ctx *ctx;
	const char *user;
	uid_t uid;
	const struct nfskeys_secret *password; /* NULL at close */
	bool open;
	bool tgt; /* the Kerberos TGT was made */
	int failures;
};

/* Each word of a [PAM] list key (blanks or commas between them). */
static void each_word(const char *list, void (*fn)(struct job *, const char *), struct job *j)
{
	char buf[1024], *save = NULL;

	if (!list || strlen(list) >= sizeof(buf))
		return;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *w = strtok_r(buf, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save))
		fn(j, w);
}

static void fail(struct job *j, const char *what, const char *target, int r)
{
	/* the child has no PAM log of its own that reaches the parent's: syslog and stderr */
	syslog(LOG_AUTHPRIV | LOG_WARNING, "pam_nfskeys: %s: %s for %s: %s", j->user, what,
	       target, strerror(-r));
	fprintf(stderr, "pam_nfskeys: %s: %s for %s: %s\n", j->user, what, target, strerror(-r));
	j->failures++;
}

static void do_cifs(struct job *j, const char *target, unsigned flags)
{
	struct nfskeys_cred_params p = {
		.target = target, .user = j->user, .password = j->password, .flags = flags
	};
	int r;

	if (j->open) {
		r = nfskeys_cred_add(j->ctx, "cifs", &p);
		if (r == -EEXIST)
			r = nfskeys_cred_update(j->ctx, "cifs", &p);
	} else {
		r = nfskeys_cred_clear(j->ctx, "cifs", &p);
		if (r == -ENOKEY)
			r = 0;
	}
	if (r < 0)
		fail(j, j->open ? "CIFS logon key" : "removing the CIFS logon key", target, r);
}

static void cifs_server(struct job *j, const char *t)
{
	do_cifs(j, t, 0);
}

static void cifs_domain(struct job *j, const char *t)
{
	do_cifs(j, t, NFSKEYS_CRED_DOMAIN);
}

static void afs_cell(struct job *j, const char *cell)
{
	struct nfskeys_cred_params p = { .target = cell };
	int r = j->open ? nfskeys_cred_add(j->ctx, "afs", &p) : nfskeys_cred_clear(j->ctx, "afs", &p);

	if (r == -EEXIST && j->open)
		r = nfskeys_cred_update(j->ctx, "afs", &p);
	if (r < 0 && !(r == -ENOKEY && !j->open))
		fail(j, j->open ? "AFS token" : "removing the AFS token", cell, r);
}

/* In the child, as the user: enable the renewal timer for this user alone, as
 * 'systemctl --user enable' would (the link in ~/.config/systemd/user/timers.target.wants),
 * without needing the user's manager, which often starts after this session step; the
 * manager reads the link when it starts.  One that already runs is asked to start the timer
 * now.  A user who wants no renewal masks the timer (systemctl --user mask). */
static void enable_renew_timer(struct job *j, const char *home)
{
	static const char *const dirs[] = { "/.config", "/.config/systemd", "/.config/systemd/user",
					    "/.config/systemd/user/timers.target.wants" };
	const char *unit = SYSTEMDUSERUNITDIR "/" RENEW_TIMER;
	char path[PATH_MAX];
	pid_t pid;

	if (access(unit, R_OK) < 0) {
		fail(j, "enabling the renewal timer", unit, -errno);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s%s", home, dirs[i]) >= sizeof(path)) {
			fail(j, "enabling the renewal timer", home, -ENAMETOOLONG);
			return;
		}
		if (mkdir(path, i == 0 ? 0700 : 0755) < 0 && errno != EEXIST) {
			fail(j, "enabling the renewal timer", path, -errno);
			return;
		}
	}
	if ((size_t)snprintf(path, sizeof(path), "%s%s/" RENEW_TIMER, home,
			     dirs[ARRAY_SIZE(dirs) - 1]) >= sizeof(path)) {
		fail(j, "enabling the renewal timer", home, -ENAMETOOLONG);
		return;
	}
	if (symlink(unit, path) < 0 && errno != EEXIST) {
		fail(j, "enabling the renewal timer", path, -errno);
		return;
	}
	/* the user's manager, when it runs, listens on XDG_RUNTIME_DIR/systemd/private */
	snprintf(path, sizeof(path), "/run/user/%u/systemd/private", (unsigned)j->uid);
	if (access(path, F_OK) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		snprintf(path, sizeof(path), "/run/user/%u", (unsigned)j->uid);
		setenv("XDG_RUNTIME_DIR", path, 1);
		execlp("systemctl", "systemctl", "--user", "--no-block", "start", RENEW_TIMER,
		       (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
}

/* In the child, as the user: everything [PAM] asks for. */
static int work(struct job *j)
{
	char cache[64];
	bool b;
	int r;

	snprintf(cache, sizeof(cache), "KEYRING:persistent:%u", (unsigned)j->uid);
	if (nfskeys_conf_get_bool(j->ctx, "PAM", "Kerberos", &b) < 0)
		b = true;
	if (b) {
		struct nfskeys_cred_params p = { .user = j->user, .ccache = cache,
						 .password = j->password };

		if (j->open) {
			r = nfskeys_cred_add(j->ctx, "nfs", &p);
			if (r == -EEXIST)
				r = nfskeys_cred_update(j->ctx, "nfs", &p);
		} else {
			r = nfskeys_cred_clear(j->ctx, "nfs", &p);
			if (r == -ENOKEY)
				r = 0;
		}
		if (r < 0)
			fail(j, j->open ? "Kerberos TGT" : "destroying the Kerberos cache", cache, r);
		j->tgt = j->open && r >= 0;
		/* AFS tokens are made from this cache */
		setenv("KRB5CCNAME", cache, 1);
	}
	each_word(nfskeys_conf_get(j->ctx, "PAM", "CIFS-Servers"), cifs_server, j);
	each_word(nfskeys_conf_get(j->ctx, "PAM", "CIFS-Domains"), cifs_domain, j);
	each_word(nfskeys_conf_get(j->ctx, "PAM", "AFS-Cells"), afs_cell, j);
	return j->failures ? 1 : 0;
}

/* In the child: become the user for good.  Root in any of the ids is enough to drop: under
 * a set-user-ID caller (su, passwd) the real uid is the caller's and only the effective
 * uid is 0, and keys or a Kerberos cache made like that would be root's.  Every uid and
 * gid (real, effective, saved) becomes the user's, and root must not be regainable.  The
 * parent keeps its ids (the PAM application goes on as it was).  A caller that is neither
 * root nor the user cannot act for the user: -EPERM. */
static int drop_to_user(pam_handle_t *pamh, const struct passwd *pw, const gid_t *groups,
			int ngroups)
{
	uid_t ru, eu, su;
	int r;

	if (getresuid(&ru, &eu, &su) < 0)
		return -errno;
	/* any id of root (a set-user-ID-root caller such as passwd or su keeps the user's
	 * real uid): the whole drop, checked (common/become-user.h) */
	if (ru == 0 || eu == 0 || su == 0) {
		r = become_user(pw->pw_uid, pw->pw_gid, groups, (size_t)ngroups);
		if (r < 0) {
			pam_syslog(pamh, LOG_ERR, "%s: cannot become uid %u for good: %s",
				   pw->pw_name, (unsigned)pw->pw_uid, strerror(-r));
			return r;
		}
	}
	if (getresuid(&ru, &eu, &su) < 0)
		return -errno;
	if (ru != pw->pw_uid || eu != pw->pw_uid || su != pw->pw_uid)
		return -EPERM; /* run by someone else: nothing to do for this user */
	return 0;
}

/* Fork, become the user in the child (keys it makes are then the user's, in this
 * process's session keyring), do the work there.  0, or 1 when something failed. */
static int run_as_user(pam_handle_t *pamh, const struct opts *o, const char *user,
		       const struct nfskeys_secret *password, bool open)
{
	struct passwd pw, *res = NULL;
	char buf[16384];
	gid_t groups[256];
	int ngroups = 256, status = 0;
	pid_t pid;

	if (getpwnam_r(user, &pw, buf, sizeof(buf), &res) != 0 || !res) {
		pam_syslog(pamh, LOG_WARNING, "no such user '%s'", user);
		return 1;
	}
	if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &ngroups) < 0)
		ngroups = 0;
	pid = fork();
	if (pid < 0) {
		pam_syslog(pamh, LOG_ERR, "fork: %m");
		return 1;
	}
	if (pid == 0) {
		struct job j = { .pamh = pamh, .user = user, .uid = pw.pw_uid,
				 .password = password, .open = open };

		/* the configuration is root's: read it (and load the plugins) before the drop */
		if (nfskeys_ctx_new_full(o->config, o->debug ? NULL : log_none, NULL, &j.ctx) < 0)
			_exit(1);
		if (drop_to_user(pamh, &pw, groups, ngroups) < 0)
			_exit(1);
		unsetenv("KRB5CCNAME");
		status = work(&j);
		if (j.tgt && o->renew) {
			enable_renew_timer(&j, pw.pw_dir);
			status = j.failures ? 1 : 0;
		}
		nfskeys_ctx_unref(j.ctx);
		_exit(status);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static void free_secret(pam_handle_t *pamh, void *data, int error_status)
{
	nfskeys_secret_free(data);
}

/* The password of this login: from PAM's item, else what auth kept.  A copy in a locked,
 * wiped-on-free buffer. */
static int get_password(pam_handle_t *pamh, struct nfskeys_secret **ret)
{
	const void *item = NULL;
	const void *kept = NULL;
	struct nfskeys_secret *s;
	size_t len;

	if (pam_get_item(pamh, PAM_AUTHTOK, &item) != PAM_SUCCESS || !item) {
		if (pam_get_data(pamh, "pam_nfskeys_authtok", &kept) != PAM_SUCCESS || !kept)
			return -ENOKEY;
		item = nfskeys_secret_data((struct nfskeys_secret *)kept);
	}
	len = strlen(item);
	if (len == 0 || nfskeys_secret_new(len + 1, &s) < 0)
		return -ENOKEY;
	memcpy(nfskeys_secret_data(s), item, len);
	nfskeys_secret_set_len(s, len);
	*ret = s;
	return 0;
}

static bool conf_flag(const struct opts *o, const char *key, bool def)
{
	struct nfskeys_ctx *ctx = NULL;
	bool v = def;

	if (nfskeys_ctx_new_full(o->config, log_none, NULL, &ctx) == 0) {
		if (nfskeys_conf_get_bool(ctx, "PAM", key, &v) < 0)
			v = def;
		nfskeys_ctx_unref(ctx);
	}
	return v;
}

/* auth: keep the password for the session (this module authenticates no one). */
PAM_EXPORT int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	const char *pw = NULL;
	struct nfskeys_secret *s;
	size_t len;

	if (pam_get_authtok(pamh, PAM_AUTHTOK, &pw, NULL) != PAM_SUCCESS || !pw)
		return PAM_IGNORE;
	len = strlen(pw);
	if (len == 0 || nfskeys_secret_new(len + 1, &s) < 0)
		return PAM_IGNORE;
	memcpy(nfskeys_secret_data(s), pw, len);
	nfskeys_secret_set_len(s, len);
	if (pam_set_data(pamh, "pam_nfskeys_authtok", s, free_secret) != PAM_SUCCESS)
		nfskeys_secret_free(s);
	return PAM_IGNORE;
}

PAM_EXPORT int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	return PAM_IGNORE;
}

static int session(pam_handle_t *pamh, int argc, const char **argv, bool open)
{
	struct opts o;
	struct nfskeys_secret *pw = NULL;
	const char *user = NULL;
	int r;

	parse_args(argc, argv, &o);
	if (pam_get_user(pamh, &user, NULL) != PAM_SUCCESS || !user || !*user)
		return PAM_IGNORE;
	if (open) {
		if (get_password(pamh, &pw) < 0) {
			pam_syslog(pamh, LOG_NOTICE, "%s: no password from this login: no keys added",
				   user);
			return PAM_IGNORE;
		}
	} else if (!conf_flag(&o, "Drop-On-Close", false)) {
		return PAM_IGNORE;
	}
	r = run_as_user(pamh, &o, user, pw, open);
	nfskeys_secret_free(pw);
	if (r != 0) {
		pam_syslog(pamh, LOG_WARNING, "%s: some keys could not be %s (see the log)", user,
			   open ? "added" : "removed");
		return conf_flag(&o, "Fail-Login", false) && open ? PAM_SESSION_ERR : PAM_IGNORE;
	}
	return PAM_SUCCESS;
}

PAM_EXPORT int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	return session(pamh, argc, argv, true);
}

PAM_EXPORT int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	return session(pamh, argc, argv, false);
}

/* password: after a change, the new password is the one the session's keys need. */
PAM_EXPORT int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	if (!(flags & PAM_UPDATE_AUTHTOK))
		return PAM_IGNORE;
	return session(pamh, argc, argv, true) == PAM_SESSION_ERR ? PAM_AUTHTOK_ERR : PAM_IGNORE;
}
