/* One CFR iteration of a Pasur round (pasur.solve.cfr.RoundCFR) in one compiled loop over its layers.
 *
 * The torch path (RoundCFR._fused_iteration: _fast_reach, _fast_values, layer_groups.update_group and
 * match) runs about ten tensor operations per layer and pass; on the compact tree's small layers
 * their dispatch, not the memory they move, bounds the iteration. This file does the same
 * arithmetic edge by edge, with the same formulas in the same order, so the iterates are the torch
 * path's bit for bit:
 *   - every sum per parent adds its edges in ascending edge order, starting from 0 (as torch's CPU
 *     scatter_add_ and index_add_ do);
 *   - each tensor operation of the torch path is one rounded operation here (compiled with
 *     -ffp-contract=off, no -ffast-math), except the average's addcmul_, which torch computes as
 *     one fused multiply-add: fma() here;
 *   - regret matching floors at PASUR_FLOOR (pasur.common.regret.FLOOR) and divides by the
 *     parent's sum, then applies the tremble (x * spread + floor, two roundings).
 * The update of a layer runs right after its own values pass (while its edges are in cache), and
 * its regret-matching sums are added up as its floored weights are made, in the same order. q and
 * vpar are scratch between iterations, not state: the kernel keeps only what it needs there (a
 * layer's values in vpar, its q while it is updated) and no number of the state (regrets, average,
 * strategy, reaches) changes. Each loop has the form measured fastest on an AMD EPYC (Zen 4;
 * results/cfr-native/): the reach and the values of the layers not updated edge by edge
 * (scatter-adds), the values of the updated layers parent by parent (their runs of edges).
 * (Torch fuses addcmul_ wherever the CPU has FMA, as every x86-64 CPU since 2013; on one without,
 * the average would differ in the last bit.)
 *
 * Compiled once per source, flags and compiler by pasur.solve.native (the per-user cache), for
 * float (suffix _f32) and double (suffix _f64): this file includes itself once per type.
 */
#ifndef PASUR_REAL

#include <math.h>
#include <stdint.h>
#include <string.h>

/* one layer's tensors (the solver's views of its groups' flat tensors); mirrored by
 * pasur.solve.native.Layer (ctypes): six int64, then thirteen pointers */
typedef struct {
    int64_t n_edges, n_parent, n_child, mover, tree_like, unused; /* (mover 0: Alex, 1: Bob) */
    const int32_t *parent; /* [E] index among this layer's parents */
    const int64_t *offsets; /* [n_parent + 1] where parents' edges start, when they are sorted by parent; or NULL */
    const int32_t *child;  /* [E] index among its children; NULL when tree-like (child e is edge e) */
    const void *reward;    /* [E] */
    const void *floor;     /* [E] the tremble's least probabilities, or NULL */
    const void *spread;    /* [E] 1 - k * floor, or NULL */
    void *sigma, *q;       /* [E] strategy; reward + value of the child, then the instantaneous regret */
    void *vpar;            /* [n_parent] values of the parents, then the regret-matching sums */
    void *reach0, *reach1; /* [n_parent] Alex's and Bob's reach at the parents */
    void *regret, *avg;    /* [E] */
} pasur_layer;

/* the methods, as pasur.solve.native.METHOD_CODES numbers them */
enum { M_CFR = 0, M_CFR_PLUS = 1, M_LCFR = 2, M_DCFR = 3, M_PCFR_PLUS = 4 };

/* pasur.common.regret.FLOOR: regret matching's least weight (rounded to the type as torch does) */
#define PASUR_FLOOR 1e-30

#if defined(__GNUC__)
#define PASUR_INLINE static inline __attribute__((always_inline))
#else
#define PASUR_INLINE static inline
#endif

/* The entry points: with GCC on x86-64 Linux, one clone for x86-64-v3 CPUs (AVX2 and FMA: fma() is
 * one instruction, the elementwise loops vectorized) and one for the others (fma() of the C
 * library, the same result, slower), picked when the library is loaded. */
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && !defined(__INTEL_COMPILER)
#define PASUR_ENTRY __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define PASUR_ENTRY
#endif

#define PASUR_CAT_(a, b) a##b
#define PASUR_CAT(a, b) PASUR_CAT_(a, b)

#define PASUR_REAL float
#define PASUR_FMA fmaf
#define PASUR_SUFFIX _f32
#include __FILE__
#undef PASUR_REAL
#undef PASUR_FMA
#undef PASUR_SUFFIX

#define PASUR_REAL double
#define PASUR_FMA fma
#define PASUR_SUFFIX _f64
#include __FILE__
#undef PASUR_REAL
#undef PASUR_FMA
#undef PASUR_SUFFIX

#else /* the functions of one type: PASUR_REAL, PASUR_FMA, PASUR_SUFFIX */

#define R_ PASUR_REAL
#define F_(name) PASUR_CAT(name, PASUR_SUFFIX)

/* Reach of player p at every layer's parents, from 1 at the round's roots: an edge passes its
 * parent's reach on, times its strategy where p moves (summed per child where nodes are shared). */
PASUR_INLINE void F_(reach)(const pasur_layer *layers, int64_t n_layers, int p) {
    if (n_layers == 0)
        return;
    R_ *first = (R_ *)(p ? layers[0].reach1 : layers[0].reach0);
    for (int64_t k = 0; k < layers[0].n_parent; k++)
        first[k] = (R_)1;
    for (int64_t i = 0; i + 1 < n_layers; i++) {
        const pasur_layer *L = &layers[i];
        const R_ *r = (const R_ *)(p ? L->reach1 : L->reach0);
        R_ *next = (R_ *)(p ? layers[i + 1].reach1 : layers[i + 1].reach0);
        const R_ *sigma = (const R_ *)L->sigma;
        const int32_t *parent = L->parent;
        const int64_t n = L->n_edges;
        if (L->tree_like) {
            if (L->mover == p)
                for (int64_t e = 0; e < n; e++)
                    next[e] = r[parent[e]] * sigma[e];
            else
                for (int64_t e = 0; e < n; e++)
                    next[e] = r[parent[e]];
            continue;
        }
        const int32_t *child = L->child;
        memset(next, 0, (size_t)L->n_child * sizeof(R_));
        if (L->mover == p) /* (edge by edge: faster than by the parents' runs, whose lengths vary) */
            for (int64_t e = 0; e < n; e++)
                next[child[e]] += r[parent[e]] * sigma[e];
        else
            for (int64_t e = 0; e < n; e++)
                next[child[e]] += r[parent[e]];
    }
}

/* The parents' values: the sums of strategy x q, q = reward + value of the child; `keep_q`: q kept
 * too (a layer about to be updated: summed by its parents' runs, where it has them), else edge by
 * edge. */
PASUR_INLINE void F_(values)(const pasur_layer *L, const R_ *v, int keep_q) {
    const R_ *reward = (const R_ *)L->reward, *sigma = (const R_ *)L->sigma;
    R_ *q = (R_ *)L->q, *vpar = (R_ *)L->vpar;
    const int32_t *parent = L->parent, *child = L->child;
    const int64_t n = L->n_edges;
    if (keep_q && L->offsets != NULL && !L->tree_like) { /* each parent's edges in a run: its sum in a register */
        const int64_t *off = L->offsets;
        for (int64_t p = 0; p < L->n_parent; p++) {
            R_ sum = (R_)0;
            for (int64_t e = off[p]; e < off[p + 1]; e++) {
                R_ x = v[child[e]] + reward[e];
                q[e] = x;
                sum += sigma[e] * x;
            }
            vpar[p] = sum;
        }
        return;
    }
    memset(vpar, 0, (size_t)L->n_parent * sizeof(R_));
    if (L->tree_like) {
        for (int64_t e = 0; e < n; e++) {
            R_ x = reward[e] + v[e];
            if (keep_q)
                q[e] = x;
            vpar[parent[e]] += sigma[e] * x;
        }
    } else {
        for (int64_t e = 0; e < n; e++) {
            R_ x = v[child[e]] + reward[e];
            if (keep_q)
                q[e] = x;
            vpar[parent[e]] += sigma[e] * x;
        }
    }
}

/* One edge's new cumulative regret from the old one R and the instantaneous r (update_group);
 * c1, c2: DCFR's factors on positive and other regrets, c3: Linear CFR's. */
PASUR_INLINE R_ F_(new_regret)(int method, R_ R, R_ r, R_ c1, R_ c2, R_ c3) {
    switch (method) {
    case M_DCFR: {
        R_ pos = (R < (R_)0 ? (R_)0 : R) * c1;
        R_ neg = (R > (R_)0 ? (R_)0 : R) * c2;
        return (neg + pos) + r;
    }
    case M_CFR_PLUS:
    case M_PCFR_PLUS: {
        R_ x = R + r;
        return x < (R_)0 ? (R_)0 : x;
    }
    case M_LCFR:
        return (R + r) * c3;
    default:
        return R + r;
    }
}

/* The update of one layer, after its values pass: instantaneous regrets, the average strategy, the
 * regrets and regret matching's floored weights, with their sums per parent into `totals` (each
 * parent's edges in order from 0), then the normalized strategy with the tremble. Edge by edge as
 * update_group and match (the last loop needs no order: the compiler vectorizes it). */
PASUR_INLINE void F_(update)(const pasur_layer *L, const R_ *v, int method, const R_ *coef, R_ *restrict totals) {
    const R_ *restrict own = (const R_ *)(L->mover ? L->reach1 : L->reach0);
    const R_ *restrict opp = (const R_ *)(L->mover ? L->reach0 : L->reach1);
    const R_ *restrict floor = (const R_ *)L->floor, *restrict spread = (const R_ *)L->spread;
    const R_ *restrict vpar = (const R_ *)L->vpar;
    R_ *restrict q = (R_ *)L->q, *restrict sigma = (R_ *)L->sigma, *restrict regret = (R_ *)L->regret;
    R_ *restrict avg = (R_ *)L->avg;
    const int32_t *restrict parent = L->parent;
    const int64_t n = L->n_edges;
    const R_ weight = coef[0], c1 = coef[1], c2 = coef[2], c3 = coef[3];
    F_(values)(L, v, 1);
    const int alex = L->mover == 0; /* (read once: the loop below is compiled for one mover) */
    memset(totals, 0, (size_t)L->n_parent * sizeof(R_));
    for (int64_t e = 0; e < n; e++) {
        const int32_t p = parent[e];
        R_ r = alex ? q[e] - vpar[p] : vpar[p] - q[e];
        r = r * opp[p];
        avg[e] = PASUR_FMA(own[p] * weight, sigma[e], avg[e]);
        R_ R = F_(new_regret)(method, regret[e], r, c1, c2, c3);
        regret[e] = R;
        R_ m = method == M_PCFR_PLUS ? R + r : R;
        m = m < (R_)PASUR_FLOOR ? (R_)PASUR_FLOOR : m;
        sigma[e] = m;
        totals[p] += m;
    }
    for (int64_t e = 0; e < n; e++) {
        R_ s = sigma[e] / totals[parent[e]];
        if (floor != NULL) {
            s = s * spread[e];
            s = s + floor[e];
        }
        sigma[e] = s;
    }
}

/* The update with the method a constant, so each loop is compiled for one method. */
PASUR_INLINE void F_(update_any)(const pasur_layer *L, const R_ *v, int method, const R_ *coef, R_ *totals) {
    switch (method) {
    case M_CFR:
        F_(update)(L, v, M_CFR, coef, totals);
        break;
    case M_CFR_PLUS:
        F_(update)(L, v, M_CFR_PLUS, coef, totals);
        break;
    case M_LCFR:
        F_(update)(L, v, M_LCFR, coef, totals);
        break;
    case M_DCFR:
        F_(update)(L, v, M_DCFR, coef, totals);
        break;
    default:
        F_(update)(L, v, M_PCFR_PLUS, coef, totals);
    }
}

/* One pass: the stale players' reaches forward, then backward each layer's values, and the update
 * of each layer of the players in `players` (bit p: player p); returns the players whose reach is
 * stale. `totals`: room for the largest layer's parents (a layer's regret-matching sums). */
PASUR_INLINE int64_t F_(pass)(const pasur_layer *layers, int64_t n_layers, const R_ *terminal, const R_ *coef,
                               int method, int64_t players, int64_t stale, R_ *totals) {
    for (int p = 0; p < 2; p++)
        if (stale >> p & 1)
            F_(reach)(layers, n_layers, p);
    stale = 0;
    const R_ *v = terminal;
    for (int64_t i = n_layers - 1; i >= 0; i--) {
        const pasur_layer *L = &layers[i];
        if (players >> L->mover & 1) {
            F_(update_any)(L, v, method, coef, totals);
            stale |= (int64_t)1 << L->mover;
        } else {
            F_(values)(L, v, 0);
        }
        v = (const R_ *)L->vpar;
    }
    return stale;
}

/* One iteration: alternating (Alex's update, then Bob's against it) or simultaneous; `stale` and
 * the result: the players whose reach must be recomputed (bit p); `totals`: room for the largest
 * layer's parents (`room`; earlier versions used twice that, which the binding still gives). */
PASUR_ENTRY int64_t F_(pasur_round_cfr_iterate)(const pasur_layer *layers, int64_t n_layers, const R_ *terminal,
                                                const R_ *coef, int64_t method, int64_t alternating,
                                                int64_t stale, R_ *totals, int64_t room) {
    (void)room;
    if (!alternating)
        return F_(pass)(layers, n_layers, terminal, coef, (int)method, 3, stale, totals);
    stale = F_(pass)(layers, n_layers, terminal, coef, (int)method, 1, stale, totals);
    return F_(pass)(layers, n_layers, terminal, coef, (int)method, 2, stale, totals);
}

#undef R_
#undef F_

#endif
