// Smoke test for Gecode: small CSPs written as Space subclasses, solved by DFS.
#include <gecode/int.hh>
#include <gecode/minimodel.hh>
#include <gecode/search.hh>

#include <gtest/gtest.h>

#include <array>
#include <utility>
#include <vector>

namespace {

// SEND + MORE = MONEY, every letter a distinct digit, leading digits non-zero.
class SendMoreMoney : public Gecode::Space {
 public:
  Gecode::IntVarArray letters;  // S E N D M O R Y

  SendMoreMoney() : letters(*this, 8, 0, 9) {
    using namespace Gecode;
    IntVar s(letters[0]), e(letters[1]), n(letters[2]), d(letters[3]),
        m(letters[4]), o(letters[5]), r(letters[6]), y(letters[7]);
    rel(*this, s != 0);
    rel(*this, m != 0);
    distinct(*this, letters);
    rel(*this, 1000 * s + 100 * e + 10 * n + d +  //
                   1000 * m + 100 * o + 10 * r + e ==
               10000 * m + 1000 * o + 100 * n + 10 * e + y);
    branch(*this, letters, INT_VAR_SIZE_MIN(), INT_VAL_MIN());
  }

  SendMoreMoney(SendMoreMoney &other) : Gecode::Space(other) {
    letters.update(*this, other.letters);
  }

  Gecode::Space *copy() override { return new SendMoreMoney(*this); }

  std::array<int, 8> values() const {
    std::array<int, 8> out{};
    for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = letters[i].val();
    return out;
  }
};

// Tile a 4x8 array with t1 x t2 tiles of exactly 16 elements, where t1 divides
// 4 and t2 divides 8 (q1, q2 are the tile counts along each dimension).
class Tiling : public Gecode::Space {
 public:
  Gecode::IntVarArray vars;  // t1 t2 q1 q2

  Tiling() : vars(*this, 4, 1, 8) {
    using namespace Gecode;
    IntVar t1(vars[0]), t2(vars[1]), q1(vars[2]), q2(vars[3]);
    rel(*this, t1 * q1 == 4);
    rel(*this, t2 * q2 == 8);
    rel(*this, t1 * t2 == 16);
    branch(*this, vars, INT_VAR_NONE(), INT_VAL_MIN());
  }

  Tiling(Tiling &other) : Gecode::Space(other) {
    vars.update(*this, other.vars);
  }

  Gecode::Space *copy() override { return new Tiling(*this); }
};

}  // namespace

TEST(GecodeSmokeTest, SendMoreMoneyHasUniqueSolution) {
  auto *root = new SendMoreMoney;
  Gecode::DFS<SendMoreMoney> engine(root);
  delete root;  // The engine keeps its own copy.

  std::vector<std::array<int, 8>> solutions;
  while (SendMoreMoney *s = engine.next()) {
    solutions.push_back(s->values());
    delete s;
  }

  // Classic unique solution: 9567 + 1085 = 10652.
  //                     S  E  N  D  M  O  R  Y
  const std::array<int, 8> expected{9, 5, 6, 7, 1, 0, 8, 2};
  ASSERT_EQ(solutions.size(), 1u);
  EXPECT_EQ(solutions[0], expected);
}

TEST(GecodeSmokeTest, TilingEnumeratesAllSolutions) {
  auto *root = new Tiling;
  Gecode::DFS<Tiling> engine(root);
  delete root;

  std::vector<std::pair<int, int>> tiles;
  while (Tiling *s = engine.next()) {
    tiles.emplace_back(s->vars[0].val(), s->vars[1].val());
    // Tile counts must cover the array exactly.
    EXPECT_EQ(s->vars[0].val() * s->vars[2].val(), 4);
    EXPECT_EQ(s->vars[1].val() * s->vars[3].val(), 8);
    delete s;
  }

  // t1 in {1,2,4} (divisors of 4), t2 in {1,2,4,8} (divisors of 8),
  // t1*t2 = 16: t1=1 needs t2=16 (no), t1=2 -> t2=8, t1=4 -> t2=4.
  // Branching t1 first, smallest value first: (2,8) then (4,4).
  const std::vector<std::pair<int, int>> expected{{2, 8}, {4, 4}};
  EXPECT_EQ(tiles, expected);
}
