/*
 * hfcache.h — a model's config.json in the local Hugging Face cache.
 *
 * `vramplan ORG/NAME` reads the config.json that huggingface_hub already
 * downloaded, with no network.  The cache directory is found as
 * huggingface_hub 2.4's constants.py finds it: $HF_HUB_CACHE, else
 * $HUGGINGFACE_HUB_CACHE (its legacy name), else $HF_HOME/hub, else
 * $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub (a
 * leading "~" expanded; a variable set but empty counts as unset).  A
 * repository is models--ORG--NAME/ there (file_download.py,
 * repo_folder_name), refs/REVISION holds the commit of a branch or tag,
 * and snapshots/COMMIT/config.json is the file, usually a symbolic link
 * into blobs/ (followed).
 *
 * Which snapshot: refs/main's (or --revision's: a ref, else a snapshot
 * directory named so) when it holds config.json; else the newest snapshot
 * that does (by the mtime of its config.json entry itself: when it was
 * placed), and the note says so.
 *
 * Shell side: reads the environment and the file system; only the
 * program links it (vp_cli_resolve_model in shell.c calls it).
 */
#ifndef VP_HFCACHE_H
#define VP_HFCACHE_H

#include <stdbool.h>

#include "util.h"

/* The cache directory into out, and the variable (or "~/.cache") it came
 * from into *from.  False when no candidate can be formed (no HOME). */
bool vp_hfcache_dir(struct vp_buf *out, const char **from);

/* Whether text is spelt like a Hub repository id, ORG/NAME or NAME:
 * letters, digits, '-', '_', '.', at most one '/', no "--" or "..", no
 * leading or trailing '-' or '.', at most 96 characters per part. */
bool vp_hfcache_repo_id(const char *text);

enum vp_hfcache_rc {
	VP_HF_FOUND,		/* *path set (malloc'd); note says which */
	VP_HF_NOT_CACHED,	/* no models--ORG--NAME directory */
	VP_HF_UNUSABLE,		/* cached, but no readable config.json:
				 * why in err */
};

/* repo's config.json at revision (NULL: main).  note gets one line
 * without a newline ("snapshot 0123abcd of refs/main in DIR"); err the
 * reason (without the "vramplan: " prefix) when VP_HF_UNUSABLE. */
enum vp_hfcache_rc vp_hfcache_find(const char *repo, const char *revision,
    char **path, struct vp_buf *note, struct vp_buf *err);

/* The repositories of the cache with a snapshot holding config.json, as
 * ORG/NAME (NAME alone for an id without one), sorted; 0 when none or no
 * cache.  Free with vp_hfcache_list_free. */
size_t vp_hfcache_list(char ***ids);
void vp_hfcache_list_free(char **ids, size_t n);

#endif
