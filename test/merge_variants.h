/*
 * merge_variants.h: the merge-path sort's shape/split variants as
 * test_comparison_sorts and bench_comparison name them: "SHAPE/SPLIT" items
 * in a comma-separated list (e.g. "0/fused,4/thread"), SPLIT one of
 * gs_merge_split_name's names, "/nopdl" after it for plain launches
 * (gs_merge_path_options.pdl = 0).
 */
#ifndef GPUSORT_MERGE_VARIANTS_H
#define GPUSORT_MERGE_VARIANTS_H

#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "merge_sort.cuh"

/* A shape and split of the merge-path sort (gs_merge_path_options); nopdl: pdl = 0. */
typedef struct merge_variant
{
	int			shape;
	gs_merge_split split;
	int			nopdl;
} merge_variant;

/* The variant as a list item names it. */
static inline std::string
merge_variant_name(const merge_variant &v)
{
	return std::to_string(v.shape) + "/" + gs_merge_split_name(v.split) + (v.nopdl ? "/nopdl" : "");
}

/* Sets the library's options to variant v (other fields at their defaults). */
static inline void
merge_variant_options(const merge_variant &v, gs_merge_path_options *o)
{
	gs_merge_path_default_options(o);
	o->shape = v.shape;
	o->split = v.split;
	o->pdl = !v.nopdl;
}

/* Appends the variants of list to v; items that name no shape or split are skipped. */
static inline void
merge_variants_parse(const std::string &list, std::vector<merge_variant> &v)
{
	for (std::string rest = list; !rest.empty();)
	{
		size_t		comma = rest.find(',');
		std::string item = rest.substr(0, comma);
		char		name[32];
		char	   *opt;
		int			sh,
					nopdl = 0;

		rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
		if (sscanf(item.c_str(), "%d/%31s", &sh, name) != 2 || sh < 0 || sh >= GS_NUM_MERGE_SHAPES)
			continue;
		if ((opt = strchr(name, '/')) != NULL)
		{
			if (strcmp(opt, "/nopdl") != 0)
				continue;
			*opt = '\0';
			nopdl = 1;
		}
		for (int sp = 0; sp < GS_NUM_MERGE_SPLITS; sp++)
			if (strcmp(name, gs_merge_split_name((gs_merge_split) sp)) == 0)
				v.push_back({sh, (gs_merge_split) sp, nopdl});
	}
}

#endif							/* GPUSORT_MERGE_VARIANTS_H */
