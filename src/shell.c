/*
 * shell.c — what every command of the shell shares (see shell.h): where
 * the data is, reading the model and the catalog, printing diagnostics,
 * listing YAML files, writing a file atomically, flushing the output.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include "shell.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "gpu_read.h"
#include "hfcache.h"
#include "paths.h"

/* The model library and catalog directory, where paths.h says; the text
 * stays valid until the next call. */
const char *
vp_data_dir(void)
{
	static char dir[4096];
	struct vp_buf b;

	vp_buf_init(&b);
	vp_path_find(VP_PATH_MODELS, &b);
	snprintf(dir, sizeof dir, "%s", b.s);
	vp_buf_free(&b);
	return dir;
}

int
vp_cli_flush(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "vramplan: cannot write the output: %s\n",
		    strerror(errno));
		return VP_EXIT_SYSTEM;
	}
	return VP_EXIT_OK;
}

void
vp_cli_print_diags(struct vp_diags *d)
{
	struct vp_buf b, e;

	vp_buf_init(&b);
	vp_buf_init(&e);
	vp_diags_format(d, &b);
	/* File names and the values they quote are the user's text:
	 * control characters escaped (util.h: vp_esc), newlines kept. */
	vp_buf_add_esc(&e, b.s, 1);
	fputs(e.s, stderr);
	vp_buf_free(&e);
	vp_buf_free(&b);
	vp_diags_clear(d);
}

/* Byte order; insertion sort: tens of names, no qsort context needed. */
static void
sort_names(char **v, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
			char *t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

size_t
vp_cli_yaml_files(const char *dir, char ***out)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	if (dp == NULL)
		return 0;
	while ((e = readdir(dp)) != NULL) {
		size_t len = strlen(e->d_name);

		if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			v = xreallocarray(v, cap, sizeof *v);
		}
		v[n++] = xstrdup(e->d_name);
	}
	closedir(dp);
	sort_names(v, n);
	*out = v;
	return n;
}

void
vp_cli_names_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

size_t
vp_cli_library(char ***names)
{
	return vp_library_in(vp_data_dir(), names);
}

size_t
vp_library_in(const char *dir, char ***names)
{
	size_t n = vp_cli_yaml_files(dir, names), i, k = 0;

	/* The stems of the model files; gpus.yaml is the catalog. */
	for (i = 0; i < n; i++) {
		char *v = (*names)[i];

		if (strcmp(v, "gpus.yaml") == 0) {
			free(v);
			continue;
		}
		v[strlen(v) - 5] = '\0';
		(*names)[k++] = v;
	}
	/* "gpt2" before "gpt2-large": the stems' order, not the files'. */
	sort_names(*names, k);
	return k;
}

/* Whether name ends in suffix. */
static bool
ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n >= k && strcmp(name + n - k, suffix) == 0;
}

/* The library name nearest to a repository id's NAME part (lowercase),
 * or NULL; names[] holds it. */
static const char *
nearest_library(const char *repo, char **names, size_t n)
{
	const char *slash = strrchr(repo, '/');
	char low[128];
	size_t i;

	snprintf(low, sizeof low, "%s", slash ? slash + 1 : repo);
	for (i = 0; low[i]; i++)
		low[i] = (char)tolower((unsigned char)low[i]);
	return vp_closest(low, (const char *const *)names, n);
}

/*
 * ORG/NAME (or a NAME the library lacks) from the Hugging Face cache
 * (hfcache.h).  *done set when the cache answered: the path, or NULL
 * after printing why; otherwise the caller goes on.
 */
static char *
from_hf_cache(const char *dir, const char *arg, const char *revision,
    bool *done, struct vp_log *log)
{
	struct vp_buf note, err, cache;
	const char *from = NULL;
	char *path = NULL, **names;
	size_t n;
	const char *near, *shown;
	char e1[VP_ESC_LEN], e2[VP_ESC_LEN];

	vp_buf_init(&note);
	vp_buf_init(&err);
	*done = true;
	shown = vp_esc(arg, e1, sizeof e1);
	switch (vp_hfcache_find(arg, revision, &path, &note, &err)) {
	case VP_HF_FOUND:
		vp_logf(log, "vramplan: note: %s: config.json of %s\n",
		    shown, note.s);
		break;
	case VP_HF_UNUSABLE:
		vp_logf(log, "vramplan: cannot read model '%s' from the "
		    "Hugging Face cache: %s\nvramplan: fetch its config with: "
		    "hf download %s config.json%s%s\n", shown, err.s, shown,
		    revision ? " --revision " : "",
		    revision ? vp_esc(revision, e2, sizeof e2) : "");
		break;
	case VP_HF_NOT_CACHED:
		if (strchr(arg, '/') == NULL) {
			*done = false;	/* the library's message */
			break;
		}
		vp_buf_init(&cache);
		if (!vp_hfcache_dir(&cache, &from))
			vp_buf_add(&cache, "none: HOME is not set");
		vp_logf(log, "vramplan: cannot find model '%s': no such "
		    "file, and not in the Hugging Face cache (%s%s%s); fetch "
		    "its config alone with: hf download %s config.json%s%s\n",
		    shown, cache.s, from ? ", from " : "", from ? from : "",
		    shown, revision ? " --revision " : "",
		    revision ? vp_esc(revision, e2, sizeof e2) : "");
		vp_buf_free(&cache);
		n = vp_library_in(dir, &names);
		if ((near = nearest_library(arg, names, n)) != NULL)
			vp_logf(log, "vramplan: or did you mean the library "
			    "model '%s'?\n", vp_esc(near, e2, sizeof e2));
		vp_cli_names_free(names, n);
		break;
	}
	vp_buf_free(&err);
	vp_buf_free(&note);
	return path;
}

/*
 * MODEL, in this order: an existing file; an existing directory, its
 * config.json; a library name (no '/'; with or without .yaml); a
 * Hugging Face repository id from the local cache (ORG/NAME, or a NAME
 * the library lacks; not one ending in .yaml, .yml or .json); else a
 * path, for the reader to say it cannot open.  Returns a malloc'd path,
 * or NULL after printing why.
 */
char *
vp_cli_resolve_model_at(const char *arg, const char *revision)
{
	return vp_resolve_model(NULL, arg, revision, NULL);
}

char *
vp_resolve_model(const char *dir, const char *arg, const char *revision,
    struct vp_log *log)
{
	struct vp_buf b;
	struct stat st;
	char **names;
	size_t n;
	const char *near;
	char e1[VP_ESC_LEN], e2[VP_ESC_LEN];
	bool file_like = ends_with(arg, ".yaml") || ends_with(arg, ".yml") ||
	    ends_with(arg, ".json"), done;
	char *path;

	if (dir == NULL)
		dir = vp_data_dir();
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
		vp_buf_init(&b);
		vp_buf_printf(&b, "%s/config.json", arg);
		if (revision != NULL)
			vp_logf(log, "vramplan: --revision is for a model "
			    "from the Hugging Face cache, not the directory "
			    "'%s'\n", vp_esc(arg, e1, sizeof e1));
		else if (access(b.s, F_OK) == 0)
			return b.s;
		else
			vp_logf(log, "vramplan: cannot use the directory "
			    "'%s' as a model: it holds no config.json (give a "
			    "model file, or a directory holding a Hugging Face "
			    "config.json)\n", vp_esc(arg, e1, sizeof e1));
		vp_buf_free(&b);
		return NULL;
	}
	if (revision != NULL && (access(arg, F_OK) == 0 || file_like ||
	    !vp_hfcache_repo_id(arg))) {
		vp_logf(log, "vramplan: --revision is for a model from the "
		    "Hugging Face cache (ORG/NAME), not '%s'\n",
		    vp_esc(arg, e1, sizeof e1));
		return NULL;
	}
	if (access(arg, F_OK) == 0)
		return xstrdup(arg);
	if (strchr(arg, '/') == NULL) {
		vp_buf_init(&b);
		vp_buf_printf(&b, "%s/%s", dir, arg);
		if (!ends_with(arg, ".yaml"))
			vp_buf_add(&b, ".yaml");
		if (access(b.s, R_OK) == 0 && revision == NULL)
			return b.s;
		if (access(b.s, R_OK) == 0) {
			vp_logf(log, "vramplan: --revision is for a model "
			    "from the Hugging Face cache (ORG/NAME), not the "
			    "library model '%s'\n", vp_esc(arg, e1, sizeof e1));
			vp_buf_free(&b);
			return NULL;
		}
		vp_buf_free(&b);
	}
	if (!file_like && vp_hfcache_repo_id(arg)) {
		path = from_hf_cache(dir, arg, revision, &done, log);
		if (done)
			return path;
	}
	if (strchr(arg, '/') != NULL)
		return xstrdup(arg);
	n = vp_library_in(dir, &names);
	near = vp_closest(arg, (const char *const *)names, n);
	if (near)
		vp_logf(log, "vramplan: cannot find model '%s': no such "
		    "file and not in the model library; did you mean '%s'?\n",
		    vp_esc(arg, e1, sizeof e1), vp_esc(near, e2, sizeof e2));
	else
		vp_logf(log, "vramplan: cannot find model '%s': no such "
		    "file and not in the model library (see 'vramplan "
		    "models')\n", vp_esc(arg, e1, sizeof e1));
	vp_cli_names_free(names, n);
	return NULL;
}

char *
vp_cli_resolve_model(const char *arg)
{
	return vp_cli_resolve_model_at(arg, NULL);
}

/*
 * The user's own catalog ($XDG_CONFIG_HOME/vramplan/gpus.yaml, or
 * ~/.config/vramplan/gpus.yaml) adds cards or replaces same-id ones.  A
 * malformed one is reported with its position and ignored, so the shipped
 * catalog still works.
 */
static void
merge_user_catalog(struct vp_catalog *c, struct vp_log *log)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	struct vp_diags d = { 0 };
	struct vp_catalog user;
	struct vp_buf b;

	vp_buf_init(&b);
	if (xdg != NULL && *xdg)
		vp_buf_printf(&b, "%s/vramplan/gpus.yaml", xdg);
	else if (home != NULL && *home)
		vp_buf_printf(&b, "%s/.config/vramplan/gpus.yaml", home);
	if (b.len == 0 || access(b.s, F_OK) != 0) {
		vp_buf_free(&b);
		return;
	}
	if (vp_catalog_load(b.s, &user, &d) != 0) {
		char e1[VP_ESC_LEN];

		vp_log_diags(log, &d);
		vp_logf(log, "vramplan: note: ignoring the user catalog '%s'; "
		    "using the shipped one\n", vp_esc(b.s, e1, sizeof e1));
	} else {
		vp_catalog_merge(c, &user);
		vp_catalog_free(&user);
	}
	vp_diags_clear(&d);
	vp_buf_free(&b);
}

int
vp_cli_load_catalog(const char *path, struct vp_catalog *c)
{
	return vp_load_catalog(NULL, path, c, NULL);
}

int
vp_load_catalog(const char *dir, const char *path, struct vp_catalog *c,
    struct vp_log *log)
{
	struct vp_diags d = { 0 };
	struct vp_buf b;
	int rc;

	vp_buf_init(&b);
	if (path == NULL)
		vp_buf_printf(&b, "%s/gpus.yaml", dir ? dir : vp_data_dir());
	else
		vp_buf_add(&b, path);
	rc = vp_catalog_load(b.s, c, &d);
	vp_log_diags(log, &d);
	vp_buf_free(&b);
	if (rc == 0 && path == NULL)
		merge_user_catalog(c, log);
	return rc;
}

/* What a file of mode m is, for a message; NULL for a regular file. */
static const char *
not_regular(mode_t m)
{
	if (S_ISREG(m))
		return NULL;
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

/* Where a write to path lands: path itself or, when path is a symbolic
 * link, the name at the end of its chain of links (relative targets taken
 * from the link's directory; at most 40 links, as Linux allows).  0 with
 * that name in out, *exists set and, when it exists, its lstat in st;
 * -1 after printing why. */
static int
write_target(const char *path, struct vp_buf *out, struct stat *st,
    int *exists)
{
	char link[4096];
	ssize_t n;
	int hops;

	out->len = 0;
	out->s[0] = '\0';
	vp_buf_add(out, path);
	for (hops = 0; hops <= 40; hops++) {
		if (lstat(out->s, st) != 0) {
			if (errno == ENOENT) {
				*exists = 0;
				return 0;
			}
			break;
		}
		if (!S_ISLNK(st->st_mode)) {
			*exists = 1;
			return 0;
		}
		n = readlink(out->s, link, sizeof link - 1);
		if (n < 0)
			break;
		link[n] = '\0';
		if (link[0] == '/') {
			out->len = 0;
			out->s[0] = '\0';
		} else {
			/* Keep the link's directory (up to its last '/'). */
			char *slash = strrchr(out->s, '/');

			out->len = slash != NULL ? (size_t)(slash - out->s) + 1 : 0;
			out->s[out->len] = '\0';
		}
		vp_buf_add(out, link);
	}
	if (hops > 40)
		errno = ELOOP;
	{
		const char *why = strerror(errno);
		char e1[VP_ESC_LEN];

		fprintf(stderr, "vramplan: cannot write '%s': %s\n",
		    vp_esc(path, e1, sizeof e1), why);
	}
	return -1;
}

/* Write text to path atomically: a temporary file beside it, renamed.
 * Only a regular file is ever replaced: a symbolic link is followed and
 * its target written (the temporary file beside the target, the link
 * kept); a directory, FIFO, device or socket is refused before anything
 * is created, so `--svg /dev/full` run as root cannot replace the device.
 * An existing file keeps its permission bits. */
int
vp_cli_write_atomic(const char *path, const char *text)
{
	struct vp_buf tmp, dest;
	struct stat st;
	const char *what, *shown;
	FILE *f;
	int fd, exists, rc = 0;
	mode_t mode;
	char e1[VP_ESC_LEN], e2[VP_ESC_LEN];

	/* The path in messages, escaped (util.h: vp_esc). */
	shown = vp_esc(path, e1, sizeof e1);
	/* What the kernel reaches through any links first: /dev/stdout on
	 * a pipe ends at /proc/self/fd/1 -> 'pipe:[N]', no path to follow,
	 * yet stat says FIFO. */
	if (stat(path, &st) == 0 && (what = not_regular(st.st_mode)) != NULL) {
		struct stat lst;
		bool link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);

		fprintf(stderr, "vramplan: cannot write '%s': %s %s, not a "
		    "regular file\n", shown, link ? "it leads to" : "it is",
		    what);
		return -1;
	}
	vp_buf_init(&dest);
	if (write_target(path, &dest, &st, &exists) != 0) {
		vp_buf_free(&dest);
		return -1;
	}
	if (exists && (what = not_regular(st.st_mode)) != NULL) {
		if (strcmp(dest.s, path) != 0)
			fprintf(stderr, "vramplan: cannot write '%s': its link "
			    "target '%s' is %s, not a regular file\n", shown,
			    vp_esc(dest.s, e2, sizeof e2), what);
		else
			fprintf(stderr, "vramplan: cannot write '%s': it is "
			    "%s, not a regular file\n", shown, what);
		vp_buf_free(&dest);
		return -1;
	}
	if (exists) {
		mode = st.st_mode & 07777;
	} else {
		/* mkstemp makes 0600; give the file the usual mode. */
		mode_t mask = umask(0);

		umask(mask);
		mode = 0666 & ~mask;
	}
	vp_buf_init(&tmp);
	vp_buf_printf(&tmp, "%s.tmpXXXXXX", dest.s);
	fd = mkstemp(tmp.s);
	if (fd < 0) {
		const char *why = strerror(errno);

		/* The file is written beside its target and renamed. */
		fprintf(stderr, "vramplan: cannot create '%s' (written as a "
		    "temporary file beside it, then renamed): %s\n", shown,
		    why);
		vp_buf_free(&tmp);
		vp_buf_free(&dest);
		return -1;
	}
	fchmod(fd, mode);
	f = fdopen(fd, "w");
	if (f == NULL || fputs(text, f) == EOF || fflush(f) != 0 ||
	    fsync(fd) != 0 || fclose(f) != 0) {
		fprintf(stderr, "vramplan: cannot write '%s': %s\n", shown,
		    strerror(errno));
		unlink(tmp.s);
		rc = -1;
	} else if (lstat(dest.s, &st) == 0 &&
	    (what = not_regular(st.st_mode)) != NULL) {
		/* It changed while we wrote: still replace only a file. */
		fprintf(stderr, "vramplan: cannot write '%s': it is now %s, "
		    "not a regular file\n", shown, S_ISLNK(st.st_mode) ?
		    "a symbolic link" : what);
		unlink(tmp.s);
		rc = -1;
	} else if (rename(tmp.s, dest.s) != 0) {
		fprintf(stderr, "vramplan: cannot write '%s': %s\n", shown,
		    strerror(errno));
		unlink(tmp.s);
		rc = -1;
	}
	vp_buf_free(&tmp);
	vp_buf_free(&dest);
	return rc;
}
