/*
 * cli_export.h — `vramplan export FORMAT MODEL [options]`: the estimate's
 * chosen plan written as a launch file (export.h), to stdout or -o FILE.
 * Shell side.
 */
#ifndef VP_CLI_EXPORT_H
#define VP_CLI_EXPORT_H

int vp_cmd_export(int argc, char **argv);

#endif
