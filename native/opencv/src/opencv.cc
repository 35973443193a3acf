// Small OpenCV binding for the capture pipeline (Debian's libopencv-dev, pkg-config opencv4):
// checkerboard detection (findChessboardCorners + cornerSubPix), calibrateCamera, solvePnP,
// image/video decoding (imread, VideoCapture with its FFmpeg backend), JPEG encoding (imencode) and crop+resize.
// Chosen over @u4/opencv4nodejs for build time; see main/capture/README.md.
#include <napi.h>
#include <opencv2/calib3d.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include "guarded.h"
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

// Every entry point runs inside Guarded() (native/common/guarded.h): an OpenCV assertion or any
// other C++ exception becomes a JavaScript Error with code "ERR_OPENCV".
using ai_native::codedError;

template <typename F>
auto Guarded(Napi::Env env, F&& body) -> decltype(body()) {
  return ai_native::Guarded(env, "OpenCV addon", std::forward<F>(body));
}

int intArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (info.Length() <= i || !info[i].IsNumber()) throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a number");
  return info[i].As<Napi::Number>().Int32Value();
}

double numArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (info.Length() <= i || !info[i].IsNumber()) throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a number");
  return info[i].As<Napi::Number>().DoubleValue();
}

Napi::Float64Array toF64(Napi::Env env, const double* p, size_t n) {
  auto a = Napi::Float64Array::New(env, n);
  for (size_t i = 0; i < n; i++) a[i] = p[i];
  return a;
}

Napi::Float64Array matToF64(Napi::Env env, const cv::Mat& m) {
  cv::Mat d;
  m.convertTo(d, CV_64F);
  d = d.reshape(1, 1).clone();
  return toF64(env, d.ptr<double>(), d.total());
}

std::vector<double> f64(const Napi::Value& v, const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    throw Napi::TypeError::New(v.Env(), std::string(what) + " must be a Float64Array");
  auto a = v.As<Napi::Float64Array>();
  return std::vector<double>(a.Data(), a.Data() + a.ElementLength());
}

// Image argument: a path string, or { data: Uint8Array, width, height, channels }.
cv::Mat imageArg(const Napi::Value& v, bool gray) {
  Napi::Env env = v.Env();
  if (v.IsString()) {
    cv::Mat m = cv::imread(v.As<Napi::String>().Utf8Value(), gray ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR);
    if (m.empty()) throw Napi::Error::New(env, "cannot read image " + v.As<Napi::String>().Utf8Value());
    if (!gray) cv::cvtColor(m, m, cv::COLOR_BGR2RGB);
    return m;
  }
  if (!v.IsObject()) throw Napi::TypeError::New(env, "image must be a path or {data,width,height,channels}");
  auto o = v.As<Napi::Object>();
  auto data = o.Get("data");
  if (!data.IsTypedArray() || data.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    throw Napi::TypeError::New(env, "image.data must be a Uint8Array");
  auto u8 = data.As<Napi::Uint8Array>();
  const int w = o.Get("width").As<Napi::Number>().Int32Value();
  const int h = o.Get("height").As<Napi::Number>().Int32Value();
  const int ch = o.Has("channels") ? o.Get("channels").As<Napi::Number>().Int32Value() : 3;
  if (w <= 0 || h <= 0 || (ch != 1 && ch != 3) || u8.ElementLength() != static_cast<size_t>(w) * h * ch)
    throw Napi::RangeError::New(env, "image.data length must equal width×height×channels (1 or 3)");
  cv::Mat m(h, w, ch == 1 ? CV_8UC1 : CV_8UC3, u8.Data());
  cv::Mat out;
  if (gray && ch == 3) cv::cvtColor(m, out, cv::COLOR_RGB2GRAY);
  else if (!gray && ch == 1) cv::cvtColor(m, out, cv::COLOR_GRAY2RGB);
  else out = m.clone();
  return out;
}

Napi::Object imageToJs(Napi::Env env, const cv::Mat& rgb) {
  auto o = Napi::Object::New(env);
  cv::Mat c = rgb.isContinuous() ? rgb : rgb.clone();
  auto buf = Napi::Uint8Array::New(env, c.total() * c.elemSize());
  std::memcpy(buf.Data(), c.data, c.total() * c.elemSize());
  o.Set("data", buf);
  o.Set("width", c.cols);
  o.Set("height", c.rows);
  o.Set("channels", c.channels());
  return o;
}

// findChessboard(image, cols, rows) → Float64Array (cols*rows*2, refined px) | null
Napi::Value FindChessboardImpl(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  cv::Mat gray = imageArg(info[0], true);
  const int cols = intArg(info, 1, "cols"), rows = intArg(info, 2, "rows");
  if (cols < 3 || rows < 3) throw Napi::RangeError::New(env, "a checkerboard needs at least 3×3 inner corners (got " + std::to_string(cols) + "×" + std::to_string(rows) + ")");
  // Optional 4th argument: detect on a copy downscaled to at most maxWidth px wide (fast enough
  // for a live overlay), then refine the corners sub-pixel on the full-resolution image.
  const int maxWidth = info.Length() > 3 && info[3].IsNumber() ? info[3].As<Napi::Number>().Int32Value() : 0;
  double scale = 1.0;
  cv::Mat detectOn = gray;
  if (maxWidth > 0 && gray.cols > maxWidth) {
    scale = double(gray.cols) / maxWidth;
    cv::resize(gray, detectOn, cv::Size(maxWidth, std::max(1, static_cast<int>(std::lround(gray.rows / scale)))), 0, 0, cv::INTER_AREA);
  }
  std::vector<cv::Point2f> corners;
  const bool ok = cv::findChessboardCorners(detectOn, cv::Size(cols, rows), corners,
                                            cv::CALIB_CB_ADAPTIVE_THRESH | cv::CALIB_CB_NORMALIZE_IMAGE | cv::CALIB_CB_FAST_CHECK);
  if (!ok) return env.Null();
  if (scale != 1.0) {
    // Corner centres: OpenCV pixel centres are at integer coordinates, so map (x + 0.5)·s − 0.5.
    for (auto& c : corners) c = cv::Point2f(float((c.x + 0.5) * scale - 0.5), float((c.y + 0.5) * scale - 0.5));
  }
  cv::cornerSubPix(gray, corners, cv::Size(11, 11), cv::Size(-1, -1),
                   cv::TermCriteria(cv::TermCriteria::EPS + cv::TermCriteria::COUNT, 30, 0.001));
  auto a = Napi::Float64Array::New(env, corners.size() * 2);
  for (size_t i = 0; i < corners.size(); i++) { a[2 * i] = corners[i].x; a[2 * i + 1] = corners[i].y; }
  return a;
}

// decodeImage(bytes: Uint8Array) → RGB image (cv::imdecode: JPEG, PNG, …)
Napi::Value DecodeImageImpl(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    throw Napi::TypeError::New(env, "decodeImage(bytes) needs a Uint8Array");
  auto u8 = info[0].As<Napi::Uint8Array>();
  cv::Mat buf(1, static_cast<int>(u8.ElementLength()), CV_8UC1, u8.Data());
  cv::Mat m = cv::imdecode(buf, cv::IMREAD_COLOR);
  if (m.empty()) throw Napi::Error::New(env, "cannot decode image bytes (not a JPEG/PNG OpenCV reads)");
  cv::cvtColor(m, m, cv::COLOR_BGR2RGB);
  return imageToJs(env, m);
}

// encodeJpeg(image: RGB or grey image, quality 1..100) → JPEG bytes (cv::imencode)
Napi::Value EncodeJpegImpl(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "encodeJpeg(image, quality) needs an image {data,width,height,channels}");
  cv::Mat rgb = imageArg(info[0], false), bgr;
  const int quality = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Int32Value() : 90;
  if (quality < 1 || quality > 100) throw Napi::RangeError::New(env, "encodeJpeg: quality must be 1..100");
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
  std::vector<uchar> out;
  if (!cv::imencode(".jpg", bgr, out, {cv::IMWRITE_JPEG_QUALITY, quality})) throw Napi::Error::New(env, "cv::imencode could not encode the image as JPEG");
  auto buf = Napi::Uint8Array::New(env, out.size());
  std::memcpy(buf.Data(), out.data(), out.size());
  return buf;
}

// calibrateCamera(objectPoints: Float64Array[] (M×3), imagePoints: Float64Array[] (M×2), width, height, flags?)
Napi::Value CalibrateCameraImpl(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto objs = info[0].As<Napi::Array>(), imgs = info[1].As<Napi::Array>();
  if (objs.Length() != imgs.Length() || objs.Length() == 0) throw Napi::RangeError::New(env, "need one object/image point set per view");
  std::vector<std::vector<cv::Point3f>> op;
  std::vector<std::vector<cv::Point2f>> ip;
  for (uint32_t v = 0; v < objs.Length(); v++) {
    auto o = f64(objs.Get(v), "objectPoints[i]"), p = f64(imgs.Get(v), "imagePoints[i]");
    if (o.size() / 3 != p.size() / 2) throw Napi::RangeError::New(env, "objectPoints and imagePoints disagree in count");
    std::vector<cv::Point3f> a; std::vector<cv::Point2f> b;
    for (size_t i = 0; i < o.size() / 3; i++) a.emplace_back(o[3 * i], o[3 * i + 1], o[3 * i + 2]);
    for (size_t i = 0; i < p.size() / 2; i++) b.emplace_back(p[2 * i], p[2 * i + 1]);
    op.push_back(a); ip.push_back(b);
  }
  const int w = intArg(info, 2, "width"), h = intArg(info, 3, "height");
  if (w <= 0 || h <= 0) throw Napi::RangeError::New(env, "calibrateCamera: width and height must be positive");
  const int flags = info.Length() > 4 && info[4].IsNumber() ? info[4].As<Napi::Number>().Int32Value() : 0;
  cv::Mat K, dist;
  std::vector<cv::Mat> rvecs, tvecs;
  const double rms = cv::calibrateCamera(op, ip, cv::Size(w, h), K, dist, rvecs, tvecs, flags);
  auto r = Napi::Object::New(env);
  r.Set("rms", rms);
  r.Set("K", matToF64(env, K));
  r.Set("dist", matToF64(env, dist));
  auto rv = Napi::Array::New(env, rvecs.size()), tv = Napi::Array::New(env, tvecs.size());
  for (size_t i = 0; i < rvecs.size(); i++) { rv.Set(i, matToF64(env, rvecs[i])); tv.Set(i, matToF64(env, tvecs[i])); }
  r.Set("rvecs", rv);
  r.Set("tvecs", tv);
  return r;
}

// solvePnP(objectPoints M×3, imagePoints M×2, K 9, dist) → { rvec, tvec, rms }
Napi::Value SolvePnPImpl(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto o = f64(info[0], "objectPoints"), p = f64(info[1], "imagePoints"), k = f64(info[2], "K"), d = f64(info[3], "dist");
  if (o.size() / 3 != p.size() / 2 || o.size() / 3 < 4 || k.size() != 9) throw Napi::RangeError::New(env, "solvePnP needs ≥4 matching points and a 3×3 K");
  std::vector<cv::Point3d> a; std::vector<cv::Point2d> b;
  for (size_t i = 0; i < o.size() / 3; i++) a.emplace_back(o[3 * i], o[3 * i + 1], o[3 * i + 2]);
  for (size_t i = 0; i < p.size() / 2; i++) b.emplace_back(p[2 * i], p[2 * i + 1]);
  cv::Mat K(3, 3, CV_64F, k.data()), dist(1, static_cast<int>(d.size()), CV_64F, d.data());
  cv::Mat rvec, tvec;
  if (!cv::solvePnP(a, b, K, dist, rvec, tvec, false, cv::SOLVEPNP_ITERATIVE)) return env.Null();
  std::vector<cv::Point2d> proj;
  cv::projectPoints(a, rvec, tvec, K, dist, proj);
  double se = 0;
  for (size_t i = 0; i < proj.size(); i++) { auto e = proj[i] - b[i]; se += e.dot(e); }
  auto r = Napi::Object::New(env);
  r.Set("rvec", matToF64(env, rvec));
  r.Set("tvec", matToF64(env, tvec));
  r.Set("rms", std::sqrt(se / proj.size()));
  return r;
}

// readImage(path) → { data (RGB), width, height, channels }
Napi::Value ReadImageImpl(const Napi::CallbackInfo& info) {
  return imageToJs(info.Env(), imageArg(info[0], false));
}

// cropResize(image, x0, y0, x1, y1, outW, outH) → RGB image. Maps the box [x0,x1]×[y0,y1]
// (pixel centres, align-corners) onto outW×outH with bilinear sampling; outside = black.
Napi::Value CropResizeImpl(const Napi::CallbackInfo& info) {
  cv::Mat src = imageArg(info[0], false);
  const double x0 = numArg(info, 1, "x0"), y0 = numArg(info, 2, "y0");
  const double x1 = numArg(info, 3, "x1"), y1 = numArg(info, 4, "y1");
  const int ow = intArg(info, 5, "outW"), oh = intArg(info, 6, "outH");
  if (ow <= 0 || oh <= 0 || ow > 16384 || oh > 16384) throw Napi::RangeError::New(info.Env(), "cropResize: output size must be 1..16384 px");
  const double sx = ow > 1 ? (x1 - x0) / (ow - 1) : 1, sy = oh > 1 ? (y1 - y0) / (oh - 1) : 1;
  // dst(u,v) = src(x0 + sx·u, y0 + sy·v); warpAffine takes the inverse map with WARP_INVERSE_MAP
  cv::Mat M = (cv::Mat_<double>(2, 3) << sx, 0, x0, 0, sy, y0);
  cv::Mat dst;
  cv::warpAffine(src, dst, M, cv::Size(ow, oh), cv::INTER_LINEAR | cv::WARP_INVERSE_MAP, cv::BORDER_CONSTANT, cv::Scalar(0, 0, 0));
  return imageToJs(info.Env(), dst);
}

// VideoReader: sequential RGB frames from a file via VideoCapture (FFmpeg backend).
class VideoReader : public Napi::ObjectWrap<VideoReader> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "VideoReader", {
      InstanceMethod("info", &VideoReader::G<&VideoReader::Info>),
      InstanceMethod("read", &VideoReader::G<&VideoReader::Read>),
      InstanceMethod("skip", &VideoReader::G<&VideoReader::Skip>),
      InstanceMethod("close", &VideoReader::G<&VideoReader::Close>),
    });
  }
  explicit VideoReader(const Napi::CallbackInfo& info) : Napi::ObjectWrap<VideoReader>(info) {
    Guarded(info.Env(), [&] {
      if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(info.Env(), "VideoReader(path: string)");
      path_ = info[0].As<Napi::String>().Utf8Value();
      cap_ = std::make_unique<cv::VideoCapture>(path_, cv::CAP_FFMPEG);
      if (!cap_->isOpened()) {
        cap_.reset();
        throw Napi::Error::New(info.Env(), "cannot open video " + path_);
      }
      return 0;
    });
  }

 private:
  // Guarded trampoline for every method (see Guarded()).
  template <Napi::Value (VideoReader::*M)(const Napi::CallbackInfo&)>
  Napi::Value G(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&] { return (this->*M)(info); });
  }
  // Use after close() is a JavaScript error, never a null dereference.
  void requireOpen(const Napi::CallbackInfo& info) {
    if (cap_) return;
    auto e = Napi::Error::New(info.Env(), "video " + path_ + " is closed: open a new VideoReader");
    e.Set("code", Napi::String::New(info.Env(), "ERR_VIDEO_CLOSED"));
    throw e;
  }
  Napi::Value Info(const Napi::CallbackInfo& info) {
    requireOpen(info);
    auto o = Napi::Object::New(info.Env());
    o.Set("width", cap_->get(cv::CAP_PROP_FRAME_WIDTH));
    o.Set("height", cap_->get(cv::CAP_PROP_FRAME_HEIGHT));
    o.Set("fps", cap_->get(cv::CAP_PROP_FPS));
    o.Set("frameCount", cap_->get(cv::CAP_PROP_FRAME_COUNT));
    o.Set("backend", cap_->getBackendName());
    return o;
  }
  Napi::Value Read(const Napi::CallbackInfo& info) {
    requireOpen(info);
    cv::Mat bgr;
    if (!cap_->read(bgr) || bgr.empty()) return info.Env().Null();
    cv::Mat rgb;
    cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
    return imageToJs(info.Env(), rgb);
  }
  // skip(n) → frames actually skipped (grab without colour conversion); counts frames cheaply
  Napi::Value Skip(const Napi::CallbackInfo& info) {
    requireOpen(info);
    const int n = intArg(info, 0, "skip(n)");
    int k = 0;
    while (k < n && cap_->grab()) k++;
    return Napi::Number::New(info.Env(), k);
  }
  Napi::Value Close(const Napi::CallbackInfo& info) {
    if (cap_) cap_->release();
    cap_.reset();
    return info.Env().Undefined();
  }
  std::string path_;
  std::unique_ptr<cv::VideoCapture> cap_;
};

// writeVideo(path, fourcc "MJPG", fps, frames: RawImage[]) — for tests and synthetic inputs.
Napi::Value WriteVideoImpl(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  const std::string cc = info[1].As<Napi::String>().Utf8Value();
  const double fps = numArg(info, 2, "fps");
  auto frames = info[3].As<Napi::Array>();
  if (cc.size() != 4 || frames.Length() == 0) throw Napi::RangeError::New(env, "writeVideo needs a 4-character fourcc and at least one frame");
  cv::Mat first = imageArg(frames.Get(0u), false);
  cv::VideoWriter w(path, cv::VideoWriter::fourcc(cc[0], cc[1], cc[2], cc[3]), fps, first.size(), true);
  if (!w.isOpened()) throw Napi::Error::New(env, "cannot open video writer for " + path);
  for (uint32_t i = 0; i < frames.Length(); i++) {
    cv::Mat rgb = imageArg(frames.Get(i), false), bgr;
    cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
    w.write(bgr);
  }
  w.release();
  return env.Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("writeVideo", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Guarded(i.Env(), [&] { return WriteVideoImpl(i); }); }));
  exports.Set("findChessboard", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Guarded(i.Env(), [&] { return FindChessboardImpl(i); }); }));
  exports.Set("calibrateCamera", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Guarded(i.Env(), [&] { return CalibrateCameraImpl(i); }); }));
  exports.Set("solvePnP", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Guarded(i.Env(), [&] { return SolvePnPImpl(i); }); }));
  exports.Set("decodeImage", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Guarded(i.Env(), [&] { return DecodeImageImpl(i); }); }));
  exports.Set("encodeJpeg", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Guarded(i.Env(), [&] { return EncodeJpegImpl(i); }); }));
  exports.Set("readImage", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Guarded(i.Env(), [&] { return ReadImageImpl(i); }); }));
  exports.Set("cropResize", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Guarded(i.Env(), [&] { return CropResizeImpl(i); }); }));
  exports.Set("VideoReader", VideoReader::Define(env));
  exports.Set("version", Napi::String::New(env, CV_VERSION));
  return exports;
}

}  // namespace

NODE_API_MODULE(opencv, Init)
