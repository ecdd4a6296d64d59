/*
 * hfcache.c — a model's config.json in the local Hugging Face cache (see
 * hfcache.h).  Paths and rules follow huggingface_hub 2.4: constants.py
 * (the cache directory), file_download.py (repo_folder_name,
 * try_to_load_from_cache: refs/REVISION read as the commit), and
 * utils/_validators.py (REPO_ID_REGEX: what a repository id may be).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include "hfcache.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* An environment variable, NULL when unset or empty. */
static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v ? v : NULL;
}

/* v with a leading "~" (alone or before '/') as $HOME, as expanduser. */
static void
add_expanded(struct vp_buf *out, const char *v)
{
	const char *home = env("HOME");

	if (v[0] == '~' && (v[1] == '/' || v[1] == '\0') && home != NULL) {
		vp_buf_add(out, home);
		v++;
	}
	vp_buf_add(out, v);
}

bool
vp_hfcache_dir(struct vp_buf *out, const char **from)
{
	static const char *const direct[] = {
		"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE",
	};
	const char *v;
	size_t i;

	for (i = 0; i < VP_NELEM(direct); i++)
		if ((v = env(direct[i])) != NULL) {
			*from = direct[i];
			add_expanded(out, v);
			return true;
		}
	if ((v = env("HF_HOME")) != NULL) {
		*from = "HF_HOME";
		add_expanded(out, v);
	} else if ((v = env("XDG_CACHE_HOME")) != NULL) {
		*from = "XDG_CACHE_HOME";
		add_expanded(out, v);
		vp_buf_add(out, "/huggingface");
	} else if ((v = env("HOME")) != NULL) {
		*from = "~/.cache";
		vp_buf_add(out, v);
		vp_buf_add(out, "/.cache/huggingface");
	} else
		return false;
	vp_buf_add(out, "/hub");
	return true;
}

/* One part of a repository id: \b[\w\-.]{1,96}\b with no "--" or "..". */
static bool
id_part(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 96)
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		bool word = isalnum(c) || c == '_';

		if (!word && c != '-' && c != '.')
			return false;
		if ((i == 0 || i == n - 1) && !word)
			return false;
		if (i > 0 && (c == '-' || c == '.') && s[i - 1] == (char)c)
			return false;
	}
	return true;
}

bool
vp_hfcache_repo_id(const char *text)
{
	const char *slash = strchr(text, '/');

	if (slash == NULL)
		return id_part(text, strlen(text));
	return strchr(slash + 1, '/') == NULL &&
	    id_part(text, (size_t)(slash - text)) &&
	    id_part(slash + 1, strlen(slash + 1));
}

/* The first line of a small file (a ref), trailing space removed; false
 * when it cannot be read. */
static bool
read_ref(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	size_t len;

	if (f == NULL)
		return false;
	if (fgets(buf, (int)n, f) == NULL)
		buf[0] = '\0';
	fclose(f);
	len = strlen(buf);
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	return len > 0;
}

/* What is wrong with config.json at path (a broken link, unreadable),
 * into err; true when it is a readable regular file.  *absent when there
 * is no entry at all. */
static bool
check_config(const char *path, bool *absent, struct vp_buf *err)
{
	struct stat st, lst;
	char e1[VP_ESC_LEN], e2[VP_ESC_LEN];

	*absent = false;
	if (lstat(path, &lst) != 0) {
		*absent = true;
		return false;
	}
	if (stat(path, &st) != 0) {
		char link[4096];
		ssize_t k = readlink(path, link, sizeof link - 1);

		link[k > 0 ? k : 0] = '\0';
		if (S_ISLNK(lst.st_mode))
			vp_buf_printf(err, "'%s' is a broken link to '%s' (%s)",
			    vp_esc(path, e1, sizeof e1),
			    vp_esc(link, e2, sizeof e2), strerror(errno));
		else
			vp_buf_printf(err, "cannot read '%s': %s",
			    vp_esc(path, e1, sizeof e1), strerror(errno));
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		vp_buf_printf(err, "'%s' is not a regular file",
		    vp_esc(path, e1, sizeof e1));
		return false;
	}
	if (access(path, R_OK) != 0) {
		vp_buf_printf(err, "cannot read '%s': %s",
		    vp_esc(path, e1, sizeof e1), strerror(errno));
		return false;
	}
	return true;
}

/* The newest snapshot of repo_dir holding a readable config.json, by its
 * entry's own mtime (the name breaks ties); its name into best.  The
 * first problem met with a config.json is kept in err. */
static bool
newest_snapshot(const char *repo_dir, struct vp_buf *best,
    struct vp_buf *err)
{
	struct vp_buf snaps, p;
	struct timespec best_t = { 0, 0 };
	struct dirent *e;
	bool found = false;
	DIR *dp;

	vp_buf_init(&snaps);
	vp_buf_printf(&snaps, "%s/snapshots", repo_dir);
	dp = opendir(snaps.s);
	vp_buf_free(&snaps);
	if (dp == NULL)
		return false;
	vp_buf_init(&p);
	while ((e = readdir(dp)) != NULL) {
		struct stat lst;
		struct vp_buf why;
		bool absent, ok;

		if (e->d_name[0] == '.')
			continue;
		p.len = 0;
		p.s[0] = '\0';
		vp_buf_printf(&p, "%s/snapshots/%s/config.json", repo_dir,
		    e->d_name);
		vp_buf_init(&why);
		ok = check_config(p.s, &absent, &why);
		if (!ok && !absent && err->len == 0)
			vp_buf_add(err, why.s);
		vp_buf_free(&why);
		if (!ok || lstat(p.s, &lst) != 0)
			continue;
		if (!found || lst.st_mtim.tv_sec > best_t.tv_sec ||
		    (lst.st_mtim.tv_sec == best_t.tv_sec &&
		    (lst.st_mtim.tv_nsec > best_t.tv_nsec ||
		    (lst.st_mtim.tv_nsec == best_t.tv_nsec &&
		    strcmp(e->d_name, best->s) > 0)))) {
			best_t = lst.st_mtim;
			best->len = 0;
			best->s[0] = '\0';
			vp_buf_add(best, e->d_name);
			found = true;
		}
	}
	closedir(dp);
	vp_buf_free(&p);
	return found;
}

enum vp_hfcache_rc
vp_hfcache_find(const char *repo, const char *revision, char **path,
    struct vp_buf *note, struct vp_buf *err)
{
	struct vp_buf dir, rd, p, snap, why;
	const char *from, *rev = revision != NULL ? revision : "main", *c;
	const char *via = "refs/";
	char commit[256], e1[VP_ESC_LEN], e2[VP_ESC_LEN];
	struct stat st;
	bool absent, have_commit = false;
	enum vp_hfcache_rc rc = VP_HF_UNUSABLE;

	*path = NULL;
	vp_buf_init(&dir);
	if (!vp_hfcache_dir(&dir, &from)) {
		vp_buf_free(&dir);
		return VP_HF_NOT_CACHED;
	}
	/* models--ORG--NAME: every '/' of the id as "--". */
	vp_buf_init(&rd);
	vp_buf_printf(&rd, "%s/models", dir.s);
	for (c = repo; *c; c++) {
		const char *s = strchr(c, '/');
		size_t n = s ? (size_t)(s - c) : strlen(c);

		vp_buf_add(&rd, "--");
		vp_buf_addn(&rd, c, n);
		c += n;
		if (*c == '\0')
			break;
	}
	if (stat(rd.s, &st) != 0 || !S_ISDIR(st.st_mode)) {
		vp_buf_free(&rd);
		vp_buf_free(&dir);
		return VP_HF_NOT_CACHED;
	}
	vp_buf_init(&p);
	vp_buf_init(&snap);
	vp_buf_init(&why);
	/* The ref names a commit; a revision that is no ref may be one. */
	vp_buf_printf(&p, "%s/refs/%s", rd.s, rev);
	if (strstr(rev, "..") == NULL && read_ref(p.s, commit, sizeof commit))
		have_commit = true;
	else if (revision != NULL && strchr(revision, '/') == NULL &&
	    strstr(revision, "..") == NULL) {
		snprintf(commit, sizeof commit, "%s", revision);
		via = "--revision";
		have_commit = true;
	}
	if (have_commit) {
		p.len = 0;
		p.s[0] = '\0';
		vp_buf_printf(&p, "%s/snapshots/%s/config.json", rd.s, commit);
		if (check_config(p.s, &absent, &why)) {
			*path = xstrdup(p.s);
			vp_buf_printf(note, "snapshot %s (%s%s) in %s (from %s)",
			    vp_esc(commit, e1, sizeof e1), via,
			    via[0] == 'r' ? vp_esc(rev, e2, sizeof e2) : "",
			    dir.s, from);
			rc = VP_HF_FOUND;
			goto out;
		}
		if (!absent) {
			vp_buf_add(err, why.s);
			goto out;
		}
	}
	if (revision != NULL) {
		vp_buf_printf(err, "revision '%s' of '%s' is not in the "
		    "Hugging Face cache (%s) with a config.json",
		    vp_esc(revision, e1, sizeof e1), vp_esc(repo, e2,
		    sizeof e2), rd.s);
		goto out;
	}
	if (newest_snapshot(rd.s, &snap, &why)) {
		p.len = 0;
		p.s[0] = '\0';
		vp_buf_printf(&p, "%s/snapshots/%s/config.json", rd.s, snap.s);
		*path = xstrdup(p.s);
		vp_buf_printf(note, "snapshot %s (the newest holding "
		    "config.json; %s) in %s (from %s)",
		    vp_esc(snap.s, e1, sizeof e1), have_commit ?
		    "refs/main's has none" : "no refs/main", dir.s, from);
		rc = VP_HF_FOUND;
		goto out;
	}
	if (why.len > 0)
		vp_buf_add(err, why.s);
	else
		vp_buf_printf(err, "'%s' is in the Hugging Face cache (%s) but "
		    "no snapshot holds config.json", vp_esc(repo, e1,
		    sizeof e1), rd.s);
out:
	vp_buf_free(&why);
	vp_buf_free(&snap);
	vp_buf_free(&p);
	vp_buf_free(&rd);
	vp_buf_free(&dir);
	return rc;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t
vp_hfcache_list(char ***ids)
{
	struct vp_buf dir, snap, err;
	const char *from;
	struct dirent *e;
	size_t n = 0, cap = 0;
	DIR *dp;

	*ids = NULL;
	vp_buf_init(&dir);
	if (!vp_hfcache_dir(&dir, &from) || (dp = opendir(dir.s)) == NULL) {
		vp_buf_free(&dir);
		return 0;
	}
	while ((e = readdir(dp)) != NULL) {
		const char *rest = e->d_name + 8, *sep;
		struct vp_buf id, rd;

		/* models--ORG--NAME: ids hold no "--", so it splits once. */
		if (strncmp(e->d_name, "models--", 8) != 0)
			continue;
		vp_buf_init(&id);
		if ((sep = strstr(rest, "--")) != NULL) {
			vp_buf_addn(&id, rest, (size_t)(sep - rest));
			vp_buf_add(&id, "/");
			vp_buf_add(&id, sep + 2);
		} else
			vp_buf_add(&id, rest);
		vp_buf_init(&rd);
		vp_buf_printf(&rd, "%s/%s", dir.s, e->d_name);
		vp_buf_init(&snap);
		vp_buf_init(&err);
		if (vp_hfcache_repo_id(id.s) && newest_snapshot(rd.s, &snap,
		    &err)) {
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				*ids = xreallocarray(*ids, cap, sizeof **ids);
			}
			(*ids)[n++] = xstrdup(id.s);
		}
		vp_buf_free(&err);
		vp_buf_free(&snap);
		vp_buf_free(&rd);
		vp_buf_free(&id);
	}
	closedir(dp);
	vp_buf_free(&dir);
	if (n > 1)
		qsort(*ids, n, sizeof **ids, cmp_str);
	return n;
}

void
vp_hfcache_list_free(char **ids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}
