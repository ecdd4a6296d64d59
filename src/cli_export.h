/*
 * cli_export.h — `vramplan export FORMAT MODEL [options]`: the estimate's
 * chosen plan written as a launch file (export.h), to stdout or -o FILE.
 * Shell side.
 */
#ifndef VP_CLI_EXPORT_H
#define VP_CLI_EXPORT_H

#include <stdbool.h>

int vp_cmd_export(int argc, char **argv);

/* The estimate with --emit FORMAT (main.c asks vp_emit_given of its
 * words): the export's plan and file (-o FILE), and the estimate's report
 * of it on stdout, as `vramplan MODEL` prints it with the options the
 * format implies. */
bool vp_emit_given(int argc, char **argv);
int vp_cmd_emit(int argc, char **argv);

#endif
