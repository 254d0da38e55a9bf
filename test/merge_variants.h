/*
 * merge_variants.h: the merge-path sort's shape/split variants as
 * test_comparison_sorts and bench_comparison name them: "SHAPE/SPLIT" items
 * in a comma-separated list (e.g. "0/fused,4/thread"), SPLIT one of
 * bench_merge_split_name's names, then optionally "/nopdl" for plain launches
 * (gs_merge_path_options.pdl = 0) and "/rand" or "/randp" for the merge
 * order randomized in the block sort and the passes or in the passes alone
 * (gs_merge_path_options.order; without either, the fixed order).
 */
#ifndef GPUSORT_MERGE_VARIANTS_H
#define GPUSORT_MERGE_VARIANTS_H

#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "../bench/merge_variants/merge_variants.cuh"

/* A shape, split and merge order of the merge-path sort (gs_merge_path_options); nopdl: pdl = 0. */
typedef struct merge_variant
{
	int			shape;
	gs_merge_split split;
	int			nopdl;
	gs_merge_order order;
} merge_variant;

/* The variant as a list item names it. */
static inline std::string
merge_variant_name(const merge_variant &v)
{
	return std::to_string(v.shape) + "/" + bench_merge_split_name(v.split) + (v.nopdl ? "/nopdl" : "") +
		(v.order != GS_MERGE_ORDER_FIXED ? std::string("/") + bench_merge_order_name(v.order) : "");
}

/* The options of variant v (other fields at the library's). */
static inline void
merge_variant_options(const merge_variant &v, gs_merge_path_options *o)
{
	bench_merge_default_options(o);
	o->shape = v.shape;
	o->split = v.split;
	o->pdl = !v.nopdl;
	o->order = v.order;
}

/* Appends the variants of list to v; items that name no shape or split, or an unknown suffix, are skipped. */
static inline void
merge_variants_parse(const std::string &list, std::vector<merge_variant> &v)
{
	for (std::string rest = list; !rest.empty();)
	{
		size_t		comma = rest.find(',');
		std::string item = rest.substr(0, comma);
		char		name[64];
		char	   *opt;
		int			sh;
		bool		ok = true;
		merge_variant mv = {0, GS_MERGE_SPLIT_AUTO, 0, GS_MERGE_ORDER_FIXED};

		rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
		if (sscanf(item.c_str(), "%d/%63s", &sh, name) != 2 || sh < 0 || sh >= GS_NUM_MERGE_SHAPES)
			continue;
		mv.shape = sh;
		/* the suffixes, last first */
		while (ok && (opt = strrchr(name, '/')) != NULL)
		{
			if (strcmp(opt, "/nopdl") == 0)
				mv.nopdl = 1;
			else if (strcmp(opt + 1, bench_merge_order_name(GS_MERGE_ORDER_RANDOM)) == 0)
				mv.order = GS_MERGE_ORDER_RANDOM;
			else if (strcmp(opt + 1, bench_merge_order_name(GS_MERGE_ORDER_RANDOM_PASSES)) == 0)
				mv.order = GS_MERGE_ORDER_RANDOM_PASSES;
			else if (strcmp(opt + 1, bench_merge_order_name(GS_MERGE_ORDER_FIXED)) == 0)
				mv.order = GS_MERGE_ORDER_FIXED;
			else
				ok = false;
			*opt = '\0';
		}
		if (!ok)
			continue;
		for (int sp = 0; sp < GS_NUM_MERGE_SPLITS; sp++)
			if (strcmp(name, bench_merge_split_name((gs_merge_split) sp)) == 0)
			{
				mv.split = (gs_merge_split) sp;
				v.push_back(mv);
			}
	}
}

#endif							/* GPUSORT_MERGE_VARIANTS_H */
