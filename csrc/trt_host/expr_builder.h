// A symbolic IExprBuilder for the TensorRT-free plugin host.
//
// TensorRT's IExprBuilder / IDimensionExpr are thin non-virtual wrappers that forward every
// call through `mImpl` to apiv::VExprBuilder / apiv::VDimensionExpr (NvInferImpl.h). Each class
// here is both the wrapper and its own implementation (mImpl = this), so a plugin compiled
// against the real headers calls straight into this code without libnvinfer.
//
// Expressions are kept symbolic (a dynamic input dimension or shape-input value is a symbol) and
// evaluated afterwards under several bindings: the min, opt and max profile and the concrete shape.
#pragma once

#include <NvInfer.h>

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

namespace twinops_host {

#if NV_TENSORRT_MAJOR >= 10
using dim_t = int64_t;
#else
using dim_t = int32_t;  // TensorRT 8.6 dimension expressions are 32-bit
#endif

class Expr final : public nvinfer1::IDimensionExpr, public nvinfer1::apiv::VDimensionExpr {
public:
    enum class Kind { kConst, kSymbol, kOp, kSizeTensor };

    Expr(Kind kind, int64_t value, int symbol, nvinfer1::DimensionOperation op, Expr const* a, Expr const* b)
        : kind_(kind), value_(value), symbol_(symbol), op_(op), a_(a), b_(b) {
        mImpl = this;
    }
    ~Expr() noexcept override = default;

    bool isConstant() const override { return kind_ == Kind::kConst; }
    dim_t getConstantValue() const override {
        return kind_ == Kind::kConst ? static_cast<dim_t>(value_) : std::numeric_limits<dim_t>::min();
    }
#if NV_TENSORRT_MAJOR >= 10
    bool isSizeTensor() const override { return kind_ == Kind::kSizeTensor; }
#endif

    // Value under `binding` (symbol id -> value). Throws on division by zero.
    int64_t eval(std::vector<int64_t> const& binding) const {
        switch (kind_) {
        case Kind::kConst: return value_;
        case Kind::kSymbol:
            if (symbol_ < 0 || symbol_ >= static_cast<int>(binding.size()))
                throw std::runtime_error("expression refers to an unbound symbol");
            return binding[symbol_];
        // Inside an operation: the upper bound (what a buffer must hold). A size tensor as an
        // output's dimension is evaluated per profile point by the host (evaluate, lifecycle.cpp).
        case Kind::kSizeTensor: return b_->eval(binding);
        case Kind::kOp: {
            // TensorRT evaluates in dim_t: a value outside it (8.6: 32 bits) is an overflow there.
            const int64_t v = apply(op_, a_->eval(binding), b_->eval(binding));
            if (v < std::numeric_limits<dim_t>::min() || v > std::numeric_limits<dim_t>::max())
                throw std::runtime_error("dimension expression overflows " + std::to_string(8 * sizeof(dim_t)) +
                                         " bits (" + std::to_string(v) + ")");
            return v;
        }
        }
        throw std::runtime_error("corrupt expression");
    }

    static int64_t apply(nvinfer1::DimensionOperation op, int64_t x, int64_t y) {
        using Op = nvinfer1::DimensionOperation;
        switch (op) {
        case Op::kSUM: return x + y;
        case Op::kPROD: return x * y;
        case Op::kMAX: return x > y ? x : y;
        case Op::kMIN: return x < y ? x : y;
        case Op::kSUB: return x - y;
        case Op::kEQUAL: return x == y;
        case Op::kLESS: return x < y;
        case Op::kFLOOR_DIV:
        case Op::kCEIL_DIV: {
            if (y == 0) throw std::runtime_error("dimension expression divides by zero");
            int64_t q = x / y, r = x % y;
            if (r != 0 && ((r < 0) != (y < 0))) --q;  // floor
            if (op == Op::kCEIL_DIV && q * y != x) ++q;
            return q;
        }
        }
        throw std::runtime_error("unknown DimensionOperation " + std::to_string(static_cast<int>(op)));
    }

    // A size tensor's output index and its opt / upper-bound expressions (nullptr otherwise).
    int size_tensor_output() const { return kind_ == Kind::kSizeTensor ? static_cast<int>(value_) : -1; }
    Expr const* opt() const { return kind_ == Kind::kSizeTensor ? a_ : nullptr; }
    Expr const* upper() const { return kind_ == Kind::kSizeTensor ? b_ : nullptr; }

private:
    Kind kind_;
    int64_t value_;
    int symbol_;
    nvinfer1::DimensionOperation op_;
    Expr const* a_;
    Expr const* b_;
};

class ExprBuilder final : public nvinfer1::IExprBuilder, public nvinfer1::apiv::VExprBuilder {
public:
    ExprBuilder() { mImpl = this; }
    ~ExprBuilder() noexcept override = default;

    nvinfer1::IDimensionExpr const* constant(dim_t value) override {
        return make(Expr::Kind::kConst, value, -1, nvinfer1::DimensionOperation::kSUM, nullptr, nullptr);
    }

    nvinfer1::IDimensionExpr const* operation(nvinfer1::DimensionOperation op, nvinfer1::IDimensionExpr const& first,
                                              nvinfer1::IDimensionExpr const& second) override {
        Expr const* a = find(&first);
        Expr const* b = find(&second);
        if (!a || !b || static_cast<int>(op) < 0 || static_cast<int>(op) > 8) {
            errors_.push_back("operation() got an operand not made by this builder or an invalid op");
            return nullptr;  // documented: nullptr for an invalid operation
        }
        if (a->isConstant() && b->isConstant()) {
            try {  // TensorRT folds constants; a division by zero stays symbolic and fails on evaluation
                return constant(static_cast<dim_t>(Expr::apply(op, a->eval({}), b->eval({}))));
            } catch (std::exception const&) {
            }
        }
        return make(Expr::Kind::kOp, 0, -1, op, a, b);
    }

#if NV_TENSORRT_MAJOR >= 10
    // TensorRT's rules: `output` names a plugin output that must be a 0-D int32 / int64 tensor
    // (the host checks that after getOutputShapes); opt and upper are ordinary expressions.
    nvinfer1::IDimensionExpr const* declareSizeTensor(int32_t output, nvinfer1::IDimensionExpr const& opt,
                                                      nvinfer1::IDimensionExpr const& upper) override {
        Expr const* o = find(&opt);
        Expr const* u = find(&upper);
        if (!o || !u || output < 0 || o->isSizeTensor() || u->isSizeTensor()) {
            errors_.push_back("declareSizeTensor() got an operand not made by this builder, a size tensor as its "
                              "opt or upper bound, or a negative output index");
            return nullptr;
        }
        return make(Expr::Kind::kSizeTensor, output, -1, nvinfer1::DimensionOperation::kSUM, o, u);
    }
#endif

    Expr const* symbol(int id) {
        return make(Expr::Kind::kSymbol, 0, id, nvinfer1::DimensionOperation::kSUM, nullptr, nullptr);
    }
    Expr const* literal(int64_t v) {
        return make(Expr::Kind::kConst, v, -1, nvinfer1::DimensionOperation::kSUM, nullptr, nullptr);
    }
    // The Expr behind a pointer the plugin handed back, or nullptr if it is not one of ours.
    Expr const* find(nvinfer1::IDimensionExpr const* e) const {
        return e && known_.count(e) ? static_cast<Expr const*>(e) : nullptr;
    }
    std::vector<std::string> const& errors() const { return errors_; }

private:
    Expr const* make(Expr::Kind k, int64_t v, int s, nvinfer1::DimensionOperation op, Expr const* a, Expr const* b) {
        pool_.push_back(std::make_unique<Expr>(k, v, s, op, a, b));
        Expr const* e = pool_.back().get();
        known_.insert(static_cast<nvinfer1::IDimensionExpr const*>(e));
        return e;
    }
    std::deque<std::unique_ptr<Expr>> pool_;
    std::unordered_set<nvinfer1::IDimensionExpr const*> known_;
    std::vector<std::string> errors_;
};

}  // namespace twinops_host
