/*
 * json_enums — print the name tables the JSON documents take their enum
 * values from, as one JSON object { "table": ["name", ...], ... }.
 * tests/json_schema.py checks that each enum of schema/*.schema.json is
 * exactly its table, so a name added to a table (an optimizer, a
 * precision) fails the test until the schema says it.  A test program,
 * never installed.
 */
#include <stdio.h>

#include "band.h"
#include "cost.h"
#include "graph.h"
#include "json.h"
#include "mem.h"
#include "model.h"
#include "plan.h"

static void
table(struct vp_json *j, const char *key, const char *const *names, int n)
{
	int i;

	vp_json_break(j);
	vp_json_array(j, key, VP_JSON_INLINE);
	for (i = 0; i < n; i++)
		vp_json_str(j, NULL, names[i]);
	vp_json_end(j);
}

#define T(key, names, count) table(&j, key, names, count)

int
main(void)
{
	struct vp_buf o;
	struct vp_json j;

	vp_buf_init(&o);
	vp_json_init(&j, &o);
	vp_json_object(&j, NULL, VP_JSON_INLINE);
	T("arch", vp_arch_names, VP_ARCH_COUNT);
	T("prec", vp_prec_names, VP_PREC_COUNT);
	T("opt", vp_opt_names, VP_OPT_COUNT);
	T("optimpl", vp_optimpl_names, VP_OPTIMPL_COUNT);
	T("zerograd", vp_zerograd_names, VP_ZEROGRAD_COUNT);
	T("trainer", vp_trainer_names, VP_TRAINER_COUNT);
	T("float8", vp_float8_names, VP_FLOAT8_COUNT);
	T("fsdp_prefetch", vp_fsdp_prefetch_names, VP_FSDP_PREFETCH_COUNT);
	T("yesno", vp_yesno_names, VP_YESNO_COUNT);
	T("lora_wrap", vp_lora_wrap_names, VP_LORAWRAP_COUNT);
	T("fsdp_units", vp_fsdp_units_names, VP_FSDP_UNITS_COUNT);
	T("load", vp_load_names, VP_LOAD_COUNT);
	T("recomp", vp_recomp_names, VP_RECOMP_COUNT);
	T("attn", vp_attn_names, VP_ATTN_COUNT);
	T("fsdp", vp_fsdp_names, VP_FSDP_COUNT);
	T("framework", vp_framework_names, VP_FW_COUNT);
	T("quant", vp_quant_names, VP_QUANT_COUNT);
	T("kbit", vp_kbit_names, VP_KBIT_COUNT);
	T("quant_lib", vp_quant_lib_names, VP_QLIB_COUNT);
	T("offload", vp_offload_names, VP_OFFLOAD_COUNT);
	T("loss", vp_loss_names, VP_LOSS_COUNT);
	T("device", vp_device_names, VP_DEVICE_COUNT);
	T("lvl", vp_lvl_names, VP_LVL_COUNT);
	T("phase", vp_phase_names, VP_PHASE_COUNT);
	T("cat", vp_cat_names, VP_CAT_COUNT);
	T("verdict", vp_verdict_names, VP_VERDICT_COUNT);
	T("sort", vp_sort_names, VP_SORT_COUNT);
	vp_json_end(&j);
	fputs(o.s, stdout);
	vp_buf_free(&o);
	return ferror(stdout) || fflush(stdout) != 0;
}
