// Smoke test for isl: parse an access relation, take lexicographic maxima and
// count integer points.
#include <isl/ctx.h>
#include <isl/map.h>
#include <isl/set.h>
#include <isl/val.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace {

struct CtxDeleter {
  void operator()(isl_ctx *ctx) const { isl_ctx_free(ctx); }
};
using CtxPtr = std::unique_ptr<isl_ctx, CtxDeleter>;

// isl_*_to_str returns malloc'ed memory.
std::string takeString(char *s) {
  std::string out = s ? s : "<null>";
  std::free(s);
  return out;
}

std::string toString(isl_set *set) { return takeString(isl_set_to_str(set)); }

// Number of integer points of a bounded set, as a long (-1 on failure).
long countPoints(isl_set *set) {
  isl_val *v = isl_set_count_val(set);
  long n = (v && isl_val_is_int(v)) ? isl_val_get_num_si(v) : -1;
  isl_val_free(v);
  return n;
}

// S[i,j] reads A[i+j] over a 4x3 iteration space.
constexpr const char *kAccess =
    "{ S[i,j] -> A[i+j] : 0 <= i < 4 and 0 <= j < 3 }";

}  // namespace

TEST(IslSmokeTest, RangeLexmaxAndCounts) {
  CtxPtr ctx(isl_ctx_alloc());
  ASSERT_NE(ctx, nullptr);

  isl_map *access = isl_map_read_from_str(ctx.get(), kAccess);
  ASSERT_NE(access, nullptr);

  // Domain: i in [0,3], j in [0,2] -> 4 * 3 = 12 statement instances.
  isl_set *domain = isl_map_domain(isl_map_copy(access));
  EXPECT_EQ(countPoints(domain), 12);

  // Range: i + j ranges over [0+0, 3+2] = [0, 5] -> 6 distinct elements of A.
  isl_set *range = isl_map_range(isl_map_copy(access));
  EXPECT_EQ(countPoints(range), 6);

  // Lexmax of the range is the single element A[3+2] = A[5].
  isl_set *lexmax = isl_set_lexmax(isl_set_copy(range));
  ASSERT_NE(lexmax, nullptr);
  EXPECT_EQ(toString(lexmax), "{ A[5] }");
  EXPECT_EQ(countPoints(lexmax), 1);

  // Read the value back through a sample point: coordinate 0 must be 5.
  isl_point *pt = isl_set_sample_point(isl_set_copy(lexmax));
  ASSERT_NE(pt, nullptr);
  isl_val *coord = isl_point_get_coordinate_val(pt, isl_dim_set, 0);
  ASSERT_NE(coord, nullptr);
  EXPECT_EQ(isl_val_get_num_si(coord), 5);
  isl_val_free(coord);
  isl_point_free(pt);

  isl_set_free(lexmax);
  isl_set_free(range);
  isl_set_free(domain);
  isl_map_free(access);
}

TEST(IslSmokeTest, ReverseRelationLexmax) {
  CtxPtr ctx(isl_ctx_alloc());
  ASSERT_NE(ctx, nullptr);

  // For each element A[k], the lexicographically last writer S[i,j] with
  // i + j = k, 0 <= i <= 3, 0 <= j <= 2 maximises i first: i = min(k, 3),
  // then j = k - i. So k in [0,3] -> S[k,0] and k in [4,5] -> S[3,k-3].
  isl_map *reversed =
      isl_map_reverse(isl_map_read_from_str(ctx.get(), kAccess));
  isl_map *lexmax = isl_map_lexmax(reversed);
  ASSERT_NE(lexmax, nullptr);

  isl_map *expected = isl_map_read_from_str(
      ctx.get(),
      "{ A[k] -> S[k, 0] : 0 <= k <= 3; A[k] -> S[3, k - 3] : 4 <= k <= 5 }");
  ASSERT_NE(expected, nullptr);
  EXPECT_EQ(isl_map_is_equal(lexmax, expected), isl_bool_true)
      << takeString(isl_map_to_str(lexmax));

  // The lexmax is single-valued: one (k, i, j) tuple per k in [0,5] -> 6.
  EXPECT_EQ(isl_map_is_single_valued(lexmax), isl_bool_true);
  isl_set *pairs = isl_map_wrap(isl_map_copy(lexmax));
  EXPECT_EQ(countPoints(pairs), 6);

  // The whole relation, by contrast, has one pair per (i, j): 12.
  isl_set *all = isl_map_wrap(isl_map_read_from_str(ctx.get(), kAccess));
  EXPECT_EQ(countPoints(all), 12);

  isl_set_free(all);
  isl_set_free(pairs);
  isl_map_free(expected);
  isl_map_free(lexmax);
}
