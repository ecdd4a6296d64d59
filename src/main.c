/*
 * main.c — entry point: the subcommand table.
 *
 * `vramplan MODEL [options]` is the estimate; other first words name a
 * subcommand.  A model literally named like a subcommand can be given as
 * ./NAME.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_calib.h"
#include "cli_export.h"
#include "completion.h"

static int completions(int argc, char **argv);

static const struct vp_cmd cmds[] = {
	{ "models", "vramplan models", vp_cmd_models },
	{ "gpus", "vramplan gpus", vp_cmd_gpus },
	{ "compare", "vramplan compare MODEL --tokens N", vp_cmd_compare },
	{ "tui", "vramplan tui MODEL [options]", vp_cmd_tui },
	{ "calibrate", "vramplan calibrate [--device cuda|cpu]",
	    vp_cmd_calibrate },
	{ "export", "vramplan export FORMAT MODEL [options] [-o FILE]",
	    vp_cmd_export },
	{ "completions", "vramplan completions bash|zsh|fish", completions },
};

/* The completion scripts know the commands of this table. */
static int
completions(int argc, char **argv)
{
	return vp_cmd_completions(argc, argv, cmds,
	    sizeof cmds / sizeof cmds[0]);
}

int
main(int argc, char **argv)
{
	size_t i;

	if (argc >= 2)
		for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
			if (strcmp(argv[1], cmds[i].name) == 0)
				return cmds[i].exec(argc - 1, argv + 1);
	if (vp_emit_given(argc, argv))
		return vp_cmd_emit(argc, argv);
	return vp_cmd_estimate(argc, argv);
}
