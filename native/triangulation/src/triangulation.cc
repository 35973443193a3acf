// Confidence-weighted DLT triangulation with reprojection-error camera exclusion.
// Same contract as models/capture/triangulation.ts (the TypeScript reference); see that file
// for the method. Here the smallest right singular vector of A is found as the eigenvector of
// M = AᵀA for its smallest eigenvalue by shifted inverse iteration (Cholesky of M + εI),
// which converges in a few steps because that eigenvalue is near zero for consistent views.
#include <napi.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

struct Options {
  double minConfidence = 0.3;
  double maxReprojectionPx = 15.0;
  int minViews = 2;
};

struct Batch {
  int cameras = 0;
  size_t n = 0;
  std::vector<double> P;    // C×12
  std::vector<double> obs;  // N×C×3
  Options opt;
  // outputs
  std::vector<double> points;
  std::vector<double> reproj;
  std::vector<uint32_t> mask;
  std::vector<uint32_t> excluded;
  std::vector<uint32_t> lowConf;
};

inline int popcount(uint32_t x) { return __builtin_popcount(x); }

// Smallest-eigenvalue eigenvector of symmetric positive semi-definite 4×4 M (row-major).
bool smallestEigenvector(const double* M, double* out) {
  double tr = M[0] + M[5] + M[10] + M[15];
  if (!(tr > 0) || !std::isfinite(tr)) return false;
  double a[16];
  std::memcpy(a, M, sizeof a);
  const double eps = tr * 1e-15;
  for (int i = 0; i < 4; i++) a[i * 5] += eps;
  // Cholesky: a = L Lᵀ
  double L[16] = {0};
  for (int j = 0; j < 4; j++) {
    double s = a[j * 5];
    for (int k = 0; k < j; k++) s -= L[j * 4 + k] * L[j * 4 + k];
    if (!(s > 0)) s = eps > 0 ? eps : 1e-300;
    const double d = std::sqrt(s);
    L[j * 5] = d;
    for (int i = j + 1; i < 4; i++) {
      double t = a[i * 4 + j];
      for (int k = 0; k < j; k++) t -= L[i * 4 + k] * L[j * 4 + k];
      L[i * 4 + j] = t / d;
    }
  }
  double inv[4];
  for (int i = 0; i < 4; i++) inv[i] = 1.0 / L[i * 5];
  // Iterate on the dehomogenised point (v[3] = 1): one division per step and a convergence
  // test in metres (|ΔX| < 1e-9 m relative to the point's scale).
  double v[4] = {0, 0, 0, 1};
  for (int it = 0; it < 10; it++) {
    double y[4], x[4];
    for (int i = 0; i < 4; i++) {
      double s = v[i];
      for (int k = 0; k < i; k++) s -= L[i * 4 + k] * y[k];
      y[i] = s * inv[i];
    }
    for (int i = 3; i >= 0; i--) {
      double s = y[i];
      for (int k = i + 1; k < 4; k++) s -= L[k * 4 + i] * x[k];
      x[i] = s * inv[i];
    }
    if (!(std::fabs(x[3]) > 1e-300) || !std::isfinite(x[3])) return false;
    const double r = 1.0 / x[3];
    const double a = x[0] * r, b = x[1] * r, c = x[2] * r;
    const double diff = (a - v[0]) * (a - v[0]) + (b - v[1]) * (b - v[1]) + (c - v[2]) * (c - v[2]);
    v[0] = a; v[1] = b; v[2] = c;
    if (diff < 1e-18 * (1.0 + a * a + b * b + c * c)) break;
  }
  for (int i = 0; i < 4; i++) out[i] = v[i];
  return true;
}

// Returns false when the solution is degenerate. res = {X, Y, Z, meanReprojPx}.
bool triangulateViews(const double* P, const double* obs, uint32_t m, int C, double* res) {
  double M[16] = {0};
  for (int c = 0; c < C; c++) {
    if (!(m & (1u << c))) continue;
    const double u = obs[c * 3], v = obs[c * 3 + 1], w = obs[c * 3 + 2];
    const double* p = P + c * 12;
    double r1[4], r2[4];
    for (int j = 0; j < 4; j++) {
      r1[j] = w * (u * p[8 + j] - p[j]);
      r2[j] = w * (v * p[8 + j] - p[4 + j]);
    }
    for (int i = 0; i < 4; i++)
      for (int j = i; j < 4; j++) M[i * 4 + j] += r1[i] * r1[j] + r2[i] * r2[j];
  }
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < i; j++) M[i * 4 + j] = M[j * 4 + i];
  double h[4];
  if (!smallestEigenvector(M, h)) return false;
  if (std::fabs(h[3]) < 1e-300) return false;
  const double X = h[0] / h[3], Y = h[1] / h[3], Z = h[2] / h[3];
  double err = 0;
  int n = 0;
  for (int c = 0; c < C; c++) {
    if (!(m & (1u << c))) continue;
    const double* p = P + c * 12;
    const double den = p[8] * X + p[9] * Y + p[10] * Z + p[11];
    if (!(den > 0)) return false;
    const double rd = 1.0 / den;
    const double u = (p[0] * X + p[1] * Y + p[2] * Z + p[3]) * rd;
    const double v = (p[4] * X + p[5] * Y + p[6] * Z + p[7]) * rd;
    const double du = u - obs[c * 3], dv = v - obs[c * 3 + 1];
    err += std::sqrt(du * du + dv * dv);
    n++;
  }
  res[0] = X; res[1] = Y; res[2] = Z; res[3] = err / n;
  return true;
}

void run(Batch& b) {
  const int C = b.cameras;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  b.points.assign(b.n * 3, nan);
  b.reproj.assign(b.n, nan);
  b.mask.assign(b.n, 0);
  b.excluded.assign(C, 0);
  b.lowConf.assign(C, 0);
  for (size_t i = 0; i < b.n; i++) {
    const double* o = b.obs.data() + i * C * 3;
    uint32_t valid = 0;
    for (int c = 0; c < C; c++) {
      const double u = o[c * 3], v = o[c * 3 + 1], w = o[c * 3 + 2];
      const bool finite = std::isfinite(u) && std::isfinite(v);
      if (finite && w >= b.opt.minConfidence) valid |= 1u << c;
      else if (finite && w > 0) b.lowConf[c]++;
    }
    const int nValid = popcount(valid);
    if (nValid < b.opt.minViews) continue;
    double best[4] = {0, 0, 0, 0}, cur[4];
    uint32_t bestMask = 0;
    bool accepted = false;
    for (int drop = 0; nValid - drop >= b.opt.minViews && !accepted; drop++) {
      bool have = false;
      if (drop == 0) {
        // all valid views first (the common case): no subset enumeration
        if (triangulateViews(b.P.data(), o, valid, C, cur)) { std::memcpy(best, cur, sizeof best); bestMask = valid; have = true; }
        if (have && best[3] <= b.opt.maxReprojectionPx) { accepted = true; break; }
        continue;
      }
      for (uint32_t sub = valid; sub > 0; sub = (sub - 1) & valid) {
        if (popcount(sub) != nValid - drop) continue;
        if (!triangulateViews(b.P.data(), o, sub, C, cur)) continue;
        if (!have || cur[3] < best[3] || (cur[3] == best[3] && sub < bestMask)) {
          std::memcpy(best, cur, sizeof best);
          bestMask = sub;
          have = true;
        }
      }
      if (have && best[3] <= b.opt.maxReprojectionPx) accepted = true;
    }
    if (!accepted) continue;
    b.points[i * 3] = best[0];
    b.points[i * 3 + 1] = best[1];
    b.points[i * 3 + 2] = best[2];
    b.reproj[i] = best[3];
    b.mask[i] = bestMask;
    for (int c = 0; c < C; c++)
      if ((valid & (1u << c)) && !(bestMask & (1u << c))) b.excluded[c]++;
  }
}

// Parses (projections: Float64Array, observations: Float64Array, cameras: number, options?: object).
bool parse(const Napi::CallbackInfo& info, Batch& b) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsTypedArray() || !info[1].IsTypedArray() || !info[2].IsNumber()) {
    Napi::TypeError::New(env, "triangulate(projections: Float64Array, observations: Float64Array, cameras: number, options?)").ThrowAsJavaScriptException();
    return false;
  }
  auto P = info[0].As<Napi::TypedArray>();
  auto O = info[1].As<Napi::TypedArray>();
  if (P.TypedArrayType() != napi_float64_array || O.TypedArrayType() != napi_float64_array) {
    Napi::TypeError::New(env, "projections and observations must be Float64Array").ThrowAsJavaScriptException();
    return false;
  }
  const int C = info[2].As<Napi::Number>().Int32Value();
  if (C < 1 || C > 16) {
    Napi::RangeError::New(env, "triangulation supports 1-16 cameras").ThrowAsJavaScriptException();
    return false;
  }
  auto Pf = P.As<Napi::Float64Array>();
  auto Of = O.As<Napi::Float64Array>();
  if (Pf.ElementLength() != static_cast<size_t>(C) * 12) {
    Napi::RangeError::New(env, "projections must hold cameras×12 numbers").ThrowAsJavaScriptException();
    return false;
  }
  if (Of.ElementLength() % (static_cast<size_t>(C) * 3) != 0) {
    Napi::RangeError::New(env, "observations must hold N×cameras×3 numbers").ThrowAsJavaScriptException();
    return false;
  }
  b.cameras = C;
  b.n = Of.ElementLength() / (C * 3);
  b.P.assign(Pf.Data(), Pf.Data() + Pf.ElementLength());
  b.obs.assign(Of.Data(), Of.Data() + Of.ElementLength());
  if (info.Length() > 3 && info[3].IsObject()) {
    auto o = info[3].As<Napi::Object>();
    if (o.Has("minConfidence") && o.Get("minConfidence").IsNumber()) b.opt.minConfidence = o.Get("minConfidence").As<Napi::Number>().DoubleValue();
    if (o.Has("maxReprojectionPx") && o.Get("maxReprojectionPx").IsNumber()) b.opt.maxReprojectionPx = o.Get("maxReprojectionPx").As<Napi::Number>().DoubleValue();
    if (o.Has("minViews") && o.Get("minViews").IsNumber()) b.opt.minViews = o.Get("minViews").As<Napi::Number>().Int32Value();
  }
  // One view has no depth: a "3D" point from it would be fabricated. Refuse rather than clamp.
  if (b.opt.minViews < 2 || b.opt.minViews > C) {
    Napi::RangeError::New(env, "minViews must be between 2 and the number of cameras (" + std::to_string(C) + "): one view cannot give depth").ThrowAsJavaScriptException();
    return false;
  }
  if (!(b.opt.maxReprojectionPx > 0) || !std::isfinite(b.opt.minConfidence)) {
    Napi::RangeError::New(env, "maxReprojectionPx must be > 0 and minConfidence finite").ThrowAsJavaScriptException();
    return false;
  }
  return true;
}

template <typename T, typename A>
A toTyped(Napi::Env env, const std::vector<T>& v) {
  A a = A::New(env, v.size());
  if (!v.empty()) std::memcpy(a.Data(), v.data(), v.size() * sizeof(T));
  return a;
}

Napi::Object toResult(Napi::Env env, const Batch& b) {
  Napi::Object r = Napi::Object::New(env);
  r.Set("points", toTyped<double, Napi::Float64Array>(env, b.points));
  r.Set("reprojectionPx", toTyped<double, Napi::Float64Array>(env, b.reproj));
  r.Set("viewMask", toTyped<uint32_t, Napi::Uint32Array>(env, b.mask));
  r.Set("excludedCounts", toTyped<uint32_t, Napi::Uint32Array>(env, b.excluded));
  r.Set("lowConfidenceCounts", toTyped<uint32_t, Napi::Uint32Array>(env, b.lowConf));
  return r;
}

Napi::Value TriangulateSync(const Napi::CallbackInfo& info) {
  Batch b;
  if (!parse(info, b)) return info.Env().Undefined();
  run(b);
  return toResult(info.Env(), b);
}

// Runs the batch on a libuv worker thread, off the JavaScript thread.
class TriangulateWorker : public Napi::AsyncWorker {
 public:
  TriangulateWorker(Napi::Env env, Batch&& b) : Napi::AsyncWorker(env), batch_(std::move(b)), deferred_(Napi::Promise::Deferred::New(env)) {}
  void Execute() override { run(batch_); }
  void OnOK() override { deferred_.Resolve(toResult(Env(), batch_)); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }
  Napi::Promise Promise() { return deferred_.Promise(); }

 private:
  Batch batch_;
  Napi::Promise::Deferred deferred_;
};

Napi::Value TriangulateAsync(const Napi::CallbackInfo& info) {
  Batch b;
  if (!parse(info, b)) return info.Env().Undefined();
  auto* w = new TriangulateWorker(info.Env(), std::move(b));
  auto p = w->Promise();
  w->Queue();
  return p;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("triangulate", Napi::Function::New(env, TriangulateSync));
  exports.Set("triangulateAsync", Napi::Function::New(env, TriangulateAsync));
  return exports;
}

}  // namespace

NODE_API_MODULE(triangulation, Init)
