/*
 * trainer.h — --trainer: the training-loop library around the model, as
 * defaults for the options the user did not give.
 *
 * Each library (Hugging Face Trainer with accelerate and PEFT, torchtune,
 * torchtitan) is a few rows of a table (trainer.c): an option, the value
 * the library's own defaults amount to (which may depend on what else was
 * given: the GPU count, --quant, --lora, the versions) and the source it
 * follows.  vp_trainer_apply writes the values into the option set for
 * every option not given on the command line, in a plan file or by a
 * DeepSpeed config, so explicit options always win, and records what it
 * set, what it left to the user and what the library does that vramplan
 * has no mechanism for.  plain sets nothing (vramplan's own defaults).
 *
 * Pure; the record's strings are static or point into the table.
 */
#ifndef VP_TRAINER_H
#define VP_TRAINER_H

#include <stdbool.h>

#include "model.h"
#include "options.h"

/* enum vp_trainer and its names are plan.h's (VP_TRAINER_LIST). */

#define VP_TRAINER_MAXROWS 12
#define VP_TRAINER_MAXLACK 4

/* What --trainer did to the options. */
struct vp_trainer_applied {
	enum vp_trainer trainer;
	const char *what;		/* "Hugging Face Trainer + ..." */
	unsigned nset, ngiven, nlack;
	struct {
		enum vp_optid id;
		const char *value;	/* as the option spells it */
		const char *why;	/* the library's source */
	} set[VP_TRAINER_MAXROWS], given[VP_TRAINER_MAXROWS];
	const char *lack[VP_TRAINER_MAXLACK];	/* not modelled */
};

/*
 * Apply o's --trainer (plain when not given) to o for model m: every row
 * whose option o lacks and whose value applies is set in o.  a records it.  0,
 * or -1 with a message in err when a value does not parse (a bug in the
 * table).
 */
int vp_trainer_apply(struct vp_optset *o, const struct vp_model *m,
    struct vp_trainer_applied *a, struct vp_buf *err);

#endif
