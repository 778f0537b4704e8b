/* A FUSE file system that never answers some calls, for tests of daemons that are handed
 * descriptors (tests/integration/security-fd-passing.sh).  Usage:
 *   fuse-hang MOUNTPOINT PID...
 * Files: /file (a regular file), /dir (a directory), /hangdir (a directory).  For the
 * processes PID... (any of their threads) FLUSH of any file (the kernel sends it on every
 * close()) and GETATTR of /hangdir (a lookup of it too) never return; everybody else is
 * answered.  Nothing is cached (attr_timeout and entry_timeout 0), so every stat() of
 * /hangdir reaches us and no path is ever valid in the dentry cache alone.  Stop it by aborting the
 * connection (/sys/fs/fuse/connections/N/abort), then unmount.
 * Built by the test itself (cc + pkg-config fuse3), never installed. */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pid_t targets[16];
static int ntargets;

/* The kernel names the calling thread: its process is the thread group's leader. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static bool target(void)
{
	pid_t pid = fuse_get_context()->pid, tgid = tgid_of(pid);

	for (int i = 0; i < ntargets; i++)
		if (targets[i] == pid || targets[i] == tgid)
			return true;
	return false;
}

static void hang(void)
{
	for (;;)
		pause();
}

static void *hg_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	return NULL;
}

static int hg_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/hangdir") == 0 && target())
		hang();
	if (strcmp(path, "/") == 0 || strcmp(path, "/dir") == 0 || strcmp(path, "/hangdir") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, "/file") == 0) {
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
		st->st_size = 5;
		return 0;
	}
	return -ENOENT;
}

static int hg_open(const char *path, struct fuse_file_info *fi)
{
	return strcmp(path, "/file") == 0 ? 0 : -ENOENT;
}

static int hg_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	static const char data[] = "hang\n";

	if (off >= 5)
		return 0;
	size = size < (size_t)(5 - off) ? size : (size_t)(5 - off);
	memcpy(buf, data + off, size);
	return (int)size;
}

static int hg_flush(const char *path, struct fuse_file_info *fi)
{
	if (target())
		hang();
	return 0;
}

static int hg_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	if (strcmp(path, "/") == 0) {
		fill(buf, "file", NULL, 0, 0);
		fill(buf, "dir", NULL, 0, 0);
		fill(buf, "hangdir", NULL, 0, 0);
	}
	return 0;
}

static const struct fuse_operations ops = {
	.init = hg_init,
	.getattr = hg_getattr,
	.open = hg_open,
	.read = hg_read,
	.flush = hg_flush,
	.readdir = hg_readdir,
};

int main(int argc, char *argv[])
{
	char *fargv[] = { argv[0], "-f", "-o", "allow_other,default_permissions", argv[1], NULL };

	if (argc < 2)
		return 2;
	for (int i = 2; i < argc && ntargets < 16; i++)
		targets[ntargets++] = (pid_t)atoi(argv[i]);
	return fuse_main(5, fargv, &ops, NULL);
}
