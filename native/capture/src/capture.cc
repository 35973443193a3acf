// Multi-camera capture (issue 15) on Debian's libopencv-dev (pkg-config opencv4).
//
// CaptureSession opens N sources (cameras through OpenCV's platform backend: V4L2 on Linux,
// AVFoundation on macOS, Media Foundation on Windows; or video files through FFmpeg: the open is
// the only difference) and runs one capture thread per source. Every frame gets a monotonic
// timestamp (steady_clock, µs since the session was created) and goes into
//   - a bounded ring per camera for the live consumer (full: the oldest frame is discarded and
//     counted in ringDropped; capture never waits for the consumer), and
//   - while recording, a bounded queue per camera to the synchroniser thread, which groups frames
//     onto one timeline of slots T = 1/fps apart (a frame belongs to the slot whose centre is within
//     ±T/2), writes the nearest frame per camera and slot, counts surplus frames as dropped and fills
//     a slot without a frame by repeating the camera's previous frame (duplicated) — FFmpeg's
//     "-vsync cfr" drop/dup terms — and hands each camera's frames to its own writer thread
//     (MJPEG .avi + a CSV sidecar with every written frame's timestamp).
// A source that ends (end of file) or fails (read failure: an unplugged camera; an OpenCV
// exception) closes its queue; the synchroniser writes every slot the remaining frames complete,
// then closes every file, so what was captured is kept and the failed camera is named.
//
// Every JS entry point runs inside Guarded(): no C++ exception reaches std::terminate.
#include <napi.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include "guarded.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
}

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#ifdef __linux__
#include <dirent.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <sys/ioctl.h>
#include <unistd.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

using ai_native::codedError;

template <typename F>
auto Guarded(Napi::Env env, F&& body) -> decltype(body()) {
  return ai_native::Guarded(env, "capture addon", std::forward<F>(body));
}

int platformApi() {
#if defined(__APPLE__)
  return cv::CAP_AVFOUNDATION;
#elif defined(_WIN32)
  return cv::CAP_MSMF;
#elif defined(__linux__)
  return cv::CAP_V4L2;
#else
  return cv::CAP_ANY;
#endif
}

std::string fourccString(double v) {
  const int c = static_cast<int>(v);
  if (c <= 0) return "";
  std::string s;
  for (int i = 0; i < 4; i++) {
    const char ch = static_cast<char>((c >> (8 * i)) & 0xff);
    if (ch > 32 && ch < 127) s.push_back(ch);
  }
  return s;
}

// ---------------------------------------------------------------- device enumeration
struct Mode {
  int width, height;
  std::vector<double> fps;
  std::string pixelFormat;
};
struct Device {
  int index;
  std::string path, label, backend;
  std::vector<Mode> modes;
};

#ifdef __linux__
int xioctl(int fd, unsigned long req, void* arg) {
  int r;
  do r = ioctl(fd, req, arg);
  while (r == -1 && errno == EINTR);
  return r;
}

// V4L2 capture nodes with every format × discrete size × discrete interval the driver lists.
std::vector<Device> listLinux() {
  std::vector<int> nums;
  if (DIR* d = opendir("/dev")) {
    while (dirent* e = readdir(d)) {
      int n;
      char tail;
      if (std::sscanf(e->d_name, "video%d%c", &n, &tail) == 1) nums.push_back(n);
    }
    closedir(d);
  }
  std::sort(nums.begin(), nums.end());
  std::vector<Device> out;
  for (int n : nums) {
    const std::string path = "/dev/video" + std::to_string(n);
    const int fd = open(path.c_str(), O_RDWR | O_NONBLOCK);
    if (fd < 0) continue;
    v4l2_capability cap{};
    if (xioctl(fd, VIDIOC_QUERYCAP, &cap) == 0) {
      const unsigned caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
      if (caps & V4L2_CAP_VIDEO_CAPTURE) {  // metadata and output nodes are left out
        Device dev{n, path, reinterpret_cast<const char*>(cap.card), "V4L2", {}};
        v4l2_fmtdesc fmt{};
        fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        for (fmt.index = 0; xioctl(fd, VIDIOC_ENUM_FMT, &fmt) == 0; fmt.index++) {
          const std::string cc = fourccString(fmt.pixelformat);
          v4l2_frmsizeenum fs{};
          fs.pixel_format = fmt.pixelformat;
          for (fs.index = 0; xioctl(fd, VIDIOC_ENUM_FRAMESIZES, &fs) == 0; fs.index++) {
            if (fs.type != V4L2_FRMSIZE_TYPE_DISCRETE) {  // stepwise: report the largest size
              dev.modes.push_back({static_cast<int>(fs.stepwise.max_width), static_cast<int>(fs.stepwise.max_height), {}, cc});
              break;
            }
            Mode m{static_cast<int>(fs.discrete.width), static_cast<int>(fs.discrete.height), {}, cc};
            v4l2_frmivalenum fi{};
            fi.pixel_format = fmt.pixelformat;
            fi.width = fs.discrete.width;
            fi.height = fs.discrete.height;
            for (fi.index = 0; xioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, &fi) == 0; fi.index++) {
              if (fi.type == V4L2_FRMIVAL_TYPE_DISCRETE && fi.discrete.numerator > 0) m.fps.push_back(double(fi.discrete.denominator) / fi.discrete.numerator);
              else if (fi.type != V4L2_FRMIVAL_TYPE_DISCRETE && fi.stepwise.min.numerator > 0) {
                m.fps.push_back(double(fi.stepwise.min.denominator) / fi.stepwise.min.numerator);
                break;
              }
            }
            std::sort(m.fps.rbegin(), m.fps.rend());
            dev.modes.push_back(m);
          }
        }
        out.push_back(dev);
      }
    }
    close(fd);
  }
  return out;
}
#endif

// Elsewhere OpenCV has no enumeration API: probe indices 0–9 with the platform backend.
[[maybe_unused]] std::vector<Device> listByProbe() {
  std::vector<Device> out;
  for (int i = 0; i < 10; i++) {
    cv::VideoCapture cap;
    try {
      if (!cap.open(i, platformApi())) continue;
    } catch (const cv::Exception&) {
      continue;
    }
    Mode m{static_cast<int>(cap.get(cv::CAP_PROP_FRAME_WIDTH)), static_cast<int>(cap.get(cv::CAP_PROP_FRAME_HEIGHT)), {}, fourccString(cap.get(cv::CAP_PROP_FOURCC))};
    const double f = cap.get(cv::CAP_PROP_FPS);
    if (f > 0) m.fps.push_back(f);
    out.push_back({i, "", "Camera " + std::to_string(i), cap.getBackendName(), {m}});
    cap.release();
  }
  return out;
}

Napi::Value ListDevices(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
#ifdef __linux__
  auto devs = listLinux();
#else
  auto devs = listByProbe();
#endif
  auto arr = Napi::Array::New(env, devs.size());
  for (size_t i = 0; i < devs.size(); i++) {
    auto o = Napi::Object::New(env);
    o.Set("index", devs[i].index);
    o.Set("path", devs[i].path.empty() ? env.Null() : Napi::String::New(env, devs[i].path));
    o.Set("label", devs[i].label);
    o.Set("backend", devs[i].backend);
    auto modes = Napi::Array::New(env, devs[i].modes.size());
    for (size_t k = 0; k < devs[i].modes.size(); k++) {
      const Mode& m = devs[i].modes[k];
      auto mo = Napi::Object::New(env);
      mo.Set("width", m.width);
      mo.Set("height", m.height);
      auto fps = Napi::Array::New(env, m.fps.size());
      for (size_t j = 0; j < m.fps.size(); j++) fps.Set(j, m.fps[j]);
      mo.Set("fps", fps);
      mo.Set("pixelFormat", m.pixelFormat);
      modes.Set(k, mo);
    }
    o.Set("modes", modes);
    arr.Set(i, o);
  }
  return arr;
}

// ---------------------------------------------------------------- session
struct Frame {
  cv::Mat bgr;        // decoded BGR (empty for a passthrough frame until someone decodes it)
  cv::Mat jpeg;       // passthrough: the source's own JPEG bytes (1×N CV_8UC1), else empty
  int64_t t = 0;      // µs since session start
  int64_t index = 0;  // among this source's captured frames
};

// Bytes a queued frame holds: its decoded image and/or the camera's JPEG.
double frameBytes(const Frame& f) {
  return double(f.bgr.total() * f.bgr.elemSize()) + double(f.jpeg.total() * f.jpeg.elemSize());
}

bool isJpeg(const cv::Mat& m) {
  return m.type() == CV_8UC1 && m.rows == 1 && m.cols > 4 && m.isContinuous() && m.data[0] == 0xFF && m.data[1] == 0xD8;
}

// The frame as BGR: a passthrough frame is decoded here (libjpeg; `reduce` 1, 2, 4 or 8 decodes at
// 1/reduce size through the DCT, much cheaper for a preview). Throws std::runtime_error when the
// bytes do not decode.
cv::Mat frameBgr(const Frame& f, int reduce = 1) {
  if (!f.bgr.empty() || f.jpeg.empty()) return f.bgr;
  const int flag = reduce >= 8 ? cv::IMREAD_REDUCED_COLOR_8 : reduce >= 4 ? cv::IMREAD_REDUCED_COLOR_4 : reduce >= 2 ? cv::IMREAD_REDUCED_COLOR_2 : cv::IMREAD_COLOR;
  cv::Mat out = cv::imdecode(f.jpeg, flag);
  if (out.empty()) throw std::runtime_error("frame " + std::to_string(f.index) + " is not a decodable JPEG");
  return out;
}

std::string avError(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

// One MJPEG video stream in an AVI file, written by libavformat's AVI muxer (FFmpeg's "avi"
// format: RIFF AVI with an idx1 index, switching to OpenDML AVIX/indx for files past 1 GiB).
// Each frame is one JPEG, written as one packet (a '00dc' chunk) with pts = its frame number
// at a constant rate: the timestamps live in the sidecar CSV. Every libav error throws
// std::runtime_error naming the file and libav's message.
class AviMjpegMux {
 public:
  AviMjpegMux() = default;
  AviMjpegMux(const AviMjpegMux&) = delete;
  AviMjpegMux& operator=(const AviMjpegMux&) = delete;
  ~AviMjpegMux() { Free(); }

  void Open(const std::string& path, int width, int height, double fps) {
    path_ = path;
    int r = avformat_alloc_output_context2(&oc_, nullptr, "avi", path.c_str());
    if (r < 0 || !oc_) Fail("cannot set up the AVI muxer", r);
    AVStream* st = avformat_new_stream(oc_, nullptr);
    if (!st) Fail("cannot add a video stream", AVERROR(ENOMEM));
    st->codecpar->codec_type = AVMEDIA_TYPE_VIDEO;
    st->codecpar->codec_id = AV_CODEC_ID_MJPEG;
    st->codecpar->codec_tag = MKTAG('M', 'J', 'P', 'G');
    st->codecpar->width = width;
    st->codecpar->height = height;
    st->codecpar->format = AV_PIX_FMT_YUVJ420P;
    const AVRational rate = av_d2q(fps, 1000000);
    tb_ = av_inv_q(rate);
    st->time_base = tb_;
    st->avg_frame_rate = rate;
    st->r_frame_rate = rate;
    r = avio_open(&oc_->pb, path.c_str(), AVIO_FLAG_WRITE);
    if (r < 0) Fail("cannot open for writing", r);
    r = avformat_write_header(oc_, nullptr);
    if (r < 0) Fail("cannot write the AVI header", r);
    headerWritten_ = true;
  }

  void Write(const uint8_t* data, size_t size) {
    if (!headerWritten_) throw std::runtime_error(path_ + ": write before open");
    AVPacket* pkt = av_packet_alloc();
    if (!pkt) Fail("cannot allocate a packet", AVERROR(ENOMEM));
    pkt->data = const_cast<uint8_t*>(data);  // av_write_frame does not take ownership of non-refcounted data
    pkt->size = static_cast<int>(size);
    pkt->stream_index = 0;
    pkt->pts = pkt->dts = frames_;
    pkt->duration = 1;
    pkt->flags |= AV_PKT_FLAG_KEY;
    av_packet_rescale_ts(pkt, tb_, oc_->streams[0]->time_base);
    const int r = av_write_frame(oc_, pkt);
    av_packet_free(&pkt);
    if (r < 0) Fail("cannot write frame " + std::to_string(frames_), r);
    // libavformat records a failed buffered write on the AVIOContext (not in av_write_frame's
    // return): flush the frame out and read that error, so a full disk stops this writer here.
    avio_flush(oc_->pb);
    if (oc_->pb->error < 0) Fail("cannot write frame " + std::to_string(frames_), oc_->pb->error);
    frames_++;
  }

  // Writes the index and the final header fields; the file is complete after this.
  void Close() {
    if (!oc_) return;
    int r = 0;
    if (headerWritten_) r = av_write_trailer(oc_);
    int c = oc_->pb ? avio_closep(&oc_->pb) : 0;
    avformat_free_context(oc_);
    oc_ = nullptr;
    headerWritten_ = false;
    if (r < 0) Fail("cannot finish the AVI index", r);
    if (c < 0) Fail("cannot close the file", c);
  }

 private:
  [[noreturn]] void Fail(const std::string& what, int err) {
    Free();
    throw std::runtime_error(path_ + ": " + what + " (libavformat: " + avError(err) + ")");
  }
  void Free() {
    if (!oc_) return;
    if (oc_->pb) avio_closep(&oc_->pb);
    avformat_free_context(oc_);
    oc_ = nullptr;
    headerWritten_ = false;
  }
  AVFormatContext* oc_ = nullptr;
  AVRational tb_{1, 30};
  bool headerWritten_ = false;
  int64_t frames_ = 0;
  std::string path_;
};

struct Spec {
  bool device = false;
  int deviceIndex = -1;
  std::string path, name, pixelFormat = "MJPG";
  int width = 0, height = 0;
  double fps = 0;
  bool fast = false, loop = false;
  bool passthrough = true;  // keep MJPEG sources' own JPEGs (off: decode and re-encode)
};

enum class State { Running, Ended, Failed, Closed };
const char* stateName(State s) {
  switch (s) {
    case State::Running: return "running";
    case State::Ended: return "ended";
    case State::Failed: return "failed";
    default: return "closed";
  }
}

// A camera's bounded recording queue (capture thread → synchroniser); a push blocks only for a
// `pace: fast` file source. `base` = recordQueueFrames; for a realtime source the synchroniser
// raises `cap` while it waits on a slower camera (SizeRecordQueues); past `base` frames the queue
// grows only while its frames total ≤ `maxBytes` (recordQueueBytes).
struct FrameQueue {
  std::deque<Frame> q;
  size_t cap = 8;
  size_t base = 8;
  double maxBytes = 256.0 * 1024 * 1024;
  bool closed = false;
};

struct Writer {
  std::string video, timestamps;
  AviMjpegMux mux;
  int quality = 90;
  std::ofstream csv;
  std::mutex m;
  std::condition_variable cv;
  struct Item {
    Frame f;
    int64_t slot;
    bool dup;
  };
  std::deque<Item> q;
  bool done = false;
  int width = 0, height = 0;
  std::atomic<int64_t> written{0};
  std::atomic<int64_t> passedThrough{0};  // written frames that are the source's own JPEG bytes
  std::atomic<int64_t> encoded{0};        // written frames encoded here (decoded sources; black before a first frame)
  std::atomic<bool> failed{false};        // a libav/OpenCV error: the writer stopped; `error` says why
  std::string error;                      // set before `failed`
  std::thread th;
};

struct Recording {
  std::string dir;
  double seconds = 0;
  int quality = 90;
  std::vector<std::unique_ptr<Writer>> writers;
  std::thread sync;
  std::atomic<bool> stopAsked{false};
  std::atomic<bool> finished{false};
  std::atomic<int64_t> frames{0};
  std::atomic<int64_t> startUs{-1};
  std::string reason;
  std::string error;  // reason "write_failed": which file and why
  int failedCamera = -1;
};

struct Source {
  Spec spec;
  cv::VideoCapture cap;
  int width = 0, height = 0;
  double fps = 0;
  std::string pixelFormat, backend;
  bool raw = false;                      // the backend delivers undecoded frames (set at open)
  std::atomic<bool> passthrough{false};  // frames arrive as the source's own JPEGs (decided at open, may turn off on the first frame)
  bool checkedFirst = false;             // the first JPEG was decoded once to check it
  std::thread th;
  std::mutex m;
  std::condition_variable cv;  // signals ring/record queue changes
  std::deque<Frame> ring;
  FrameQueue rq;
  bool recording = false;  // frames go to rq
  State state = State::Running;
  std::string message;
  int64_t captured = 0, ringDropped = 0, lastT = -1;
  int64_t recDropped = 0, recDuplicated = 0;  // recording counters (synchroniser + queue overflow)
  int64_t recQueueDropped = 0;                // of recDropped: lost to a full recording queue
  std::deque<int64_t> recent;                 // timestamps over the last second, for measuredFps
};

class Session;
// Every live session, so the process can stop their threads when it exits (Init): a recording's
// threads still running while exit() destroys OpenCV's and libav's statics crash the process
// (SIGSEGV). Never destroyed: at exit they must outlive every other static.
std::mutex* liveM = new std::mutex;
std::set<Session*>* live = new std::set<Session*>;

class Session : public Napi::ObjectWrap<Session> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "CaptureSession", {
      InstanceMethod("sources", &Session::G<&Session::Sources>),
      InstanceMethod("fps", &Session::G<&Session::Fps>),
      InstanceMethod("counts", &Session::G<&Session::Counts>),
      InstanceMethod("read", &Session::G<&Session::Read>),
      InstanceMethod("latestJpeg", &Session::G<&Session::LatestJpeg>),
      InstanceMethod("startRecording", &Session::G<&Session::StartRecording>),
      InstanceMethod("stopRecording", &Session::G<&Session::StopRecording>),
      InstanceMethod("recording", &Session::G<&Session::RecordingStatus>),
      InstanceMethod("close", &Session::G<&Session::Close>),
      InstanceMethod("openAsync", &Session::G<&Session::OpenAsync>),
    });
  }

  explicit Session(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Session>(info), env_(info.Env()) {
    {
      std::lock_guard<std::mutex> g(*liveM);
      live->insert(this);
    }
    Guarded(info.Env(), [&] {
      Construct(info);
      return 0;
    });
  }

  ~Session() override {
    {
      std::lock_guard<std::mutex> g(*liveM);
      live->erase(this);
    }
    Shutdown();
  }

  // Stop every live session of `env` (nullptr: all): a recording ends as if stopped (every slot its
  // queued frames complete is written, every file closed), then the capture threads are joined.
  static void ShutdownAll(napi_env env) {
    std::vector<Session*> all;
    {
      std::lock_guard<std::mutex> g(*liveM);
      for (Session* x : *live)
        if (!env || x->env_ == env) all.push_back(x);
    }
    for (Session* x : all) x->Shutdown();
  }

 private:
  template <Napi::Value (Session::*M)(const Napi::CallbackInfo&)>
  Napi::Value G(const Napi::CallbackInfo& info) {
    return Guarded(info.Env(), [&] { return (this->*M)(info); });
  }

  int64_t now() const { return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0_).count(); }

  static int optInt(const Napi::Object& o, const char* k, int def, int lo, int hi) {
    if (!o.Has(k) || o.Get(k).IsUndefined()) return def;
    if (!o.Get(k).IsNumber()) throw Napi::TypeError::New(o.Env(), std::string(k) + " must be a number");
    const int v = o.Get(k).As<Napi::Number>().Int32Value();
    if (v < lo || v > hi) throw Napi::RangeError::New(o.Env(), std::string(k) + " must be " + std::to_string(lo) + ".." + std::to_string(hi));
    return v;
  }
  static double optNum(const Napi::Object& o, const char* k, double def) {
    if (!o.Has(k) || o.Get(k).IsUndefined()) return def;
    if (!o.Get(k).IsNumber()) throw Napi::TypeError::New(o.Env(), std::string(k) + " must be a number");
    const double v = o.Get(k).As<Napi::Number>().DoubleValue();
    if (!(v >= 0) || !std::isfinite(v)) throw Napi::RangeError::New(o.Env(), std::string(k) + " must be a non-negative number");
    return v;
  }
  static std::string optStr(const Napi::Object& o, const char* k, const std::string& def) {
    if (!o.Has(k) || o.Get(k).IsUndefined()) return def;
    if (!o.Get(k).IsString()) throw Napi::TypeError::New(o.Env(), std::string(k) + " must be a string");
    return o.Get(k).As<Napi::String>().Utf8Value();
  }

  void Construct(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsArray()) throw Napi::TypeError::New(env, "CaptureSession(sources: array, options?)");
    auto arr = info[0].As<Napi::Array>();
    if (arr.Length() == 0 || arr.Length() > 16) throw Napi::RangeError::New(env, "CaptureSession needs 1–16 sources");
    Napi::Object opts = info.Length() > 1 && info[1].IsObject() ? info[1].As<Napi::Object>() : Napi::Object::New(env);
    ringCap_ = optInt(opts, "ringFrames", 4, 1, 256);
    const int rqCap = optInt(opts, "recordQueueFrames", 8, 1, 256);
    const double rqBytes = optNum(opts, "recordQueueBytes", 256.0 * 1024 * 1024);
    double fps = optNum(opts, "fps", 0);
    t0_ = Clock::now();
    for (uint32_t i = 0; i < arr.Length(); i++) {
      if (!arr.Get(i).IsObject()) throw Napi::TypeError::New(env, "sources[i] must be an object");
      auto o = arr.Get(i).As<Napi::Object>();
      auto s = std::make_unique<Source>();
      Spec& sp = s->spec;
      const std::string kind = optStr(o, "kind", "");
      if (kind != "device" && kind != "file") throw Napi::TypeError::New(env, "sources[i].kind must be \"device\" or \"file\"");
      sp.device = kind == "device";
      sp.name = optStr(o, "name", "cam" + std::to_string(i + 1));
      sp.path = optStr(o, "path", "");
      sp.deviceIndex = optInt(o, "device", -1, -1, 1 << 20);
      sp.width = optInt(o, "width", 0, 0, 16384);
      sp.height = optInt(o, "height", 0, 0, 16384);
      sp.fps = optNum(o, "fps", 0);
      sp.pixelFormat = optStr(o, "pixelFormat", "MJPG");
      sp.fast = optStr(o, "pace", "realtime") == "fast";
      sp.loop = o.Has("loop") && o.Get("loop").ToBoolean().Value();
      sp.passthrough = !(o.Has("passthrough") && !o.Get("passthrough").ToBoolean().Value());
      if (!sp.device && sp.path.empty()) throw Napi::TypeError::New(env, "a file source needs a path");
      if (sp.device && sp.path.empty() && sp.deviceIndex < 0) throw Napi::TypeError::New(env, "a device source needs a device index or path");
      if (sp.pixelFormat.size() != 4) throw Napi::RangeError::New(env, "pixelFormat must be a 4-character FOURCC");
      s->rq.cap = s->rq.base = rqCap;
      s->rq.maxBytes = rqBytes;
      sources_.push_back(std::move(s));
    }
    requestedFps_ = fps;
    if (opts.Has("deferOpen") && opts.Get("deferOpen").ToBoolean().Value()) {
      // openAsync() opens the sources on a libuv worker thread (a camera open can take a second).
      deferred_ = true;
      if (opts.Has("record") && opts.Get("record").IsObject()) record_ = Napi::Persistent(opts.Get("record").As<Napi::Object>());
      return;
    }
    for (auto& s : sources_) {
      const std::string err = OpenSource(*s);
      if (!err.empty()) throw codedError(env, err, "ERR_OPENCV");
    }
    Begin(env, opts.Has("record") && opts.Get("record").IsObject() ? opts.Get("record").As<Napi::Object>() : Napi::Object());
  }

  // After every source is open: the timeline rate, an initial recording, one capture thread per source.
  void Begin(Napi::Env env, Napi::Object record) {
    double fps = requestedFps_;
    if (fps <= 0) {
      fps = 1e9;
      for (auto& s : sources_) fps = std::min(fps, s->fps > 0 ? s->fps : 30.0);
    }
    fps_ = fps;
    if (!record.IsEmpty()) BeginRecording(env, record);
    // Paced file sources release frame n at start + n/fps: a common start a little ahead lets every source open first.
    start_ = now() + 20000;
    for (size_t i = 0; i < sources_.size(); i++) sources_[i]->th = std::thread([this, i] { CaptureLoop(*sources_[i]); });
    opened_ = true;
  }

  // Opens every source on a libuv worker thread (each source on its own thread, in parallel), then
  // starts capturing on the JS thread. Resolves with undefined; rejects with ERR_OPENCV naming the
  // source that could not be opened (the others are released).
  class OpenWorker : public Napi::AsyncWorker {
   public:
    OpenWorker(Napi::Env env, Session* s, Napi::Object self)
        : Napi::AsyncWorker(env), s_(s), self_(Napi::Persistent(self)), deferred_(Napi::Promise::Deferred::New(env)) {}
    Napi::Promise Promise() { return deferred_.Promise(); }
    void Execute() override {
      std::vector<std::string> errs(s_->sources_.size());
      std::vector<std::thread> ts;
      for (size_t i = 0; i < s_->sources_.size(); i++) ts.emplace_back([this, i, &errs] {
        try {
          errs[i] = s_->OpenSource(*s_->sources_[i]);
        } catch (const std::exception& e) {
          errs[i] = std::string("cannot open source: ") + e.what();
        }
      });
      for (auto& t : ts) t.join();
      for (auto& e : errs)
        if (!e.empty()) {
          err_ = e;
          break;
        }
    }
    void OnOK() override {
      Napi::Env env = Env();
      s_->opening_ = false;
      if (!err_.empty()) {
        for (auto& src : s_->sources_) src->cap.release();
        deferred_.Reject(codedError(env, err_, "ERR_OPENCV").Value());
        return;
      }
      try {
        s_->Begin(env, s_->record_.IsEmpty() ? Napi::Object() : s_->record_.Value());
        s_->record_.Reset();
        deferred_.Resolve(env.Undefined());
      } catch (const Napi::Error& e) {
        deferred_.Reject(e.Value());
      } catch (const std::exception& e) {
        deferred_.Reject(codedError(env, std::string("capture addon: ") + e.what(), "ERR_OPENCV").Value());
      }
    }
    void OnError(const Napi::Error& e) override {
      s_->opening_ = false;
      deferred_.Reject(e.Value());
    }

   private:
    Session* s_;
    Napi::ObjectReference self_;  // keeps the session alive while its sources open
    Napi::Promise::Deferred deferred_;
    std::string err_;
  };

  Napi::Value OpenAsync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    requireOpen(env);
    if (!deferred_ || opened_ || opening_) throw codedError(env, "openAsync() is for a session created with deferOpen, once", "ERR_CAPTURE_STATE");
    opening_ = true;
    auto* w = new OpenWorker(env, this, info.This().As<Napi::Object>());
    auto p = w->Promise();
    w->Queue();
    return p;
  }

  // Opens one source and reads back what it negotiated; returns "" or what went wrong. No JS here:
  // it also runs on worker threads (openAsync).
  std::string OpenSource(Source& s) {
    const Spec& sp = s.spec;
    const std::string what = sp.device ? (sp.path.empty() ? "camera " + std::to_string(sp.deviceIndex) : "camera " + sp.path) : "video " + sp.path;
    bool ok;
    if (sp.device) {
      ok = sp.path.empty() ? s.cap.open(sp.deviceIndex, platformApi()) : s.cap.open(sp.path, platformApi());
      if (ok) {
        // Negotiation: ask, then read back what the driver granted.
        s.cap.set(cv::CAP_PROP_FOURCC, cv::VideoWriter::fourcc(sp.pixelFormat[0], sp.pixelFormat[1], sp.pixelFormat[2], sp.pixelFormat[3]));
        if (sp.width > 0) s.cap.set(cv::CAP_PROP_FRAME_WIDTH, sp.width);
        if (sp.height > 0) s.cap.set(cv::CAP_PROP_FRAME_HEIGHT, sp.height);
        if (sp.fps > 0) s.cap.set(cv::CAP_PROP_FPS, sp.fps);
      }
    } else {
      ok = s.cap.open(sp.path, cv::CAP_FFMPEG);
    }
    if (!ok || !s.cap.isOpened()) return "cannot open " + what + (sp.device ? " (not attached, busy, or no permission)" : " (missing, corrupt or unsupported codec)");
    s.width = static_cast<int>(s.cap.get(cv::CAP_PROP_FRAME_WIDTH));
    s.height = static_cast<int>(s.cap.get(cv::CAP_PROP_FRAME_HEIGHT));
    s.fps = s.cap.get(cv::CAP_PROP_FPS);
    if (!(s.fps > 0) || s.fps > 1000) s.fps = sp.device ? 30 : 25;
    s.pixelFormat = fourccString(s.cap.get(cv::CAP_PROP_FOURCC));
    s.backend = s.cap.getBackendName();
    s.raw = sp.passthrough && isMjpegFourcc(s.pixelFormat) && SetRaw(s);
    s.passthrough.store(s.raw);
    return "";
  }

  static bool isMjpegFourcc(const std::string& cc) { return cc == "MJPG" || cc == "mjpg" || cc == "jpeg" || cc == "JPEG"; }

  // Ask the backend for the undecoded frames (before the first grab): V4L2 hands over the driver's
  // buffer with CAP_PROP_CONVERT_RGB off; FFmpeg returns each demuxed packet with CAP_PROP_FORMAT
  // = -1 (OpenCV 4.6: both as a 1×N CV_8UC1 Mat). Returns whether the backend accepted.
  bool SetRaw(Source& s) {
    if (s.spec.device) return s.cap.set(cv::CAP_PROP_CONVERT_RGB, 0);
    return s.cap.set(cv::CAP_PROP_FORMAT, -1);
  }

  // A retrieved frame into `f`: the JPEG kept as it is (passthrough), or decoded. The first JPEG is
  // decoded once: when it is not a JPEG of the negotiated size, passthrough turns off and every
  // frame is decoded (the writer then re-encodes). Throws std::runtime_error for undecodable bytes.
  void Ingest(Source& s, cv::Mat&& m, Frame& f) {
    if (!s.raw) {
      f.bgr = std::move(m);
      return;
    }
    if (s.passthrough.load() && isJpeg(m)) {
      if (!s.checkedFirst) {
        s.checkedFirst = true;
        cv::Mat probe = cv::imdecode(m, cv::IMREAD_COLOR);
        if (probe.empty() || probe.cols != s.width || probe.rows != s.height) {
          s.passthrough.store(false);
          if (probe.empty()) throw std::runtime_error("the first frame is not a decodable JPEG");
          f.bgr = probe;
          return;
        }
      }
      f.jpeg = std::move(m);
      return;
    }
    // raw mode, but not passed through: decode here like any other source
    s.passthrough.store(false);
    if (m.rows != 1 || m.type() != CV_8UC1) {  // the backend decoded after all
      f.bgr = std::move(m);
      return;
    }
    Frame tmp;
    tmp.jpeg = m;
    tmp.index = f.index;
    f.bgr = frameBgr(tmp);
  }

  // ------------------------------------------------------------ capture thread
  void CaptureLoop(Source& s) {
    const Spec& sp = s.spec;
    int64_t n = 0;          // frames delivered
    int64_t fileFrame = 0;  // frames since the file (re)started, for pacing
    int64_t fileBase = 0;   // frames delivered before the current loop of the file
    State end = State::Ended;
    std::string why;
    try {
      while (!stop_.load()) {
        Frame f;
        bool ok;
        cv::Mat m;
        if (sp.device) {
          ok = s.cap.grab();
          f.t = now();
          ok = ok && s.cap.retrieve(m) && !m.empty();
          if (!ok) {
            end = State::Failed;
            why = "read failed: the camera stopped delivering frames (unplugged?)";
            break;
          }
          Ingest(s, std::move(m), f);
        } else {
          ok = s.cap.read(m) && !m.empty();
          if (!ok && sp.loop && fileFrame > 0) {
            s.cap.release();
            if (!s.cap.open(sp.path, cv::CAP_FFMPEG) || (s.raw && !SetRaw(s))) {
              end = State::Failed;
              why = "cannot reopen " + sp.path + " to loop";
              break;
            }
            fileBase += fileFrame;
            fileFrame = 0;
            continue;
          }
          if (!ok) {
            why = "end of file after " + std::to_string(n) + " frames";
            break;
          }
          Ingest(s, std::move(m), f);
          const int64_t due = start_ + static_cast<int64_t>(std::llround(double(fileBase + fileFrame) * 1e6 / s.fps));
          fileFrame++;
          if (sp.fast) {
            f.t = due;  // media clock: presentation time on the session clock
          } else {
            const int64_t wait = due - now();
            if (wait > 0) {
              std::unique_lock<std::mutex> lk(stopM_);
              stopCv_.wait_for(lk, std::chrono::microseconds(wait), [&] { return stop_.load(); });
            }
            f.t = now();
          }
        }
        Deliver(s, std::move(f), n);
      }
    } catch (const cv::Exception& e) {
      end = State::Failed;
      why = "OpenCV " + e.func + ": " + e.err;
    } catch (const std::exception& e) {
      end = State::Failed;
      why = e.what();
    }
    s.cap.release();
    std::unique_lock<std::mutex> lk(s.m);
    s.state = stop_.load() ? State::Closed : end;
    s.message = stop_.load() ? "closed" : why;
    s.rq.closed = true;
    s.cv.notify_all();
    lk.unlock();
    WakeSync();
  }

  void Deliver(Source& s, Frame&& f, int64_t& n) {
    if (DeliverLocked(s, std::move(f), n)) WakeSync();
  }

  // Wake the synchroniser without a lost wake-up: taking syncM_ (with no source lock held) orders
  // this after its predicate check or before it.
  void WakeSync() {
    { std::lock_guard<std::mutex> g(syncM_); }
    syncCv_.notify_all();
  }

  // Returns true when the frame went to the recording queue.
  bool DeliverLocked(Source& s, Frame&& f, int64_t& n) {
    bool queued = false;
    std::unique_lock<std::mutex> lk(s.m);
    if (s.lastT >= 0 && f.t <= s.lastT) f.t = s.lastT + 1;  // strictly monotonic per camera
    f.index = n++;
    s.lastT = f.t;
    s.captured++;
    s.recent.push_back(f.t);
    while (!s.recent.empty() && s.recent.front() < f.t - 1000000) s.recent.pop_front();
    if (s.recording && !s.rq.closed) {
      bool push = true;
      if (s.spec.fast) {
        // Offline source: back-pressure instead of loss.
        s.cv.wait(lk, [&] { return s.rq.q.size() < s.rq.cap || s.rq.closed || stop_.load(); });
      } else {
        // Realtime: a full queue loses a frame, counted as dropped — never its front, the frame the
        // synchroniser keeps for the slot it is deciding (evicting that one, slot after slot, made a
        // fast camera next to a slow one record mostly its own duplicates). The oldest frame after
        // the front goes; with a one-frame queue, the new frame.
        auto& q = s.rq.q;
        double bytes = -1;  // the queue's bytes with the new frame, counted only past `base` frames
        for (;;) {
          bool full = q.size() >= s.rq.cap;
          if (!full && q.size() >= s.rq.base) {
            if (bytes < 0) {
              bytes = frameBytes(f);
              for (const Frame& x : q) bytes += frameBytes(x);
            }
            full = bytes > s.rq.maxBytes;
          }
          if (!full) break;
          s.recDropped++;
          s.recQueueDropped++;
          if (q.size() < 2) {
            push = false;
            break;
          }
          if (bytes >= 0) bytes -= frameBytes(q[1]);
          q.erase(q.begin() + 1);
        }
      }
      if (push && !s.rq.closed) {
        s.rq.q.push_back(Frame{f.bgr, f.jpeg, f.t, f.index});
        queued = true;
      }
    }
    if (s.ring.size() >= ringCap_) {
      s.ring.pop_front();
      s.ringDropped++;
    }
    s.ring.push_back(std::move(f));
    return queued;
  }

  // ------------------------------------------------------------ recording
  void BeginRecording(Napi::Env env, const Napi::Object& cfg) {
    if (rec_ && !rec_->finished.load()) throw codedError(env, "a recording is already running", "ERR_CAPTURE_STATE");
    if (rec_) FinishJoin();
    auto r = std::make_unique<Recording>();
    r->dir = optStr(cfg, "dir", "");
    if (r->dir.empty()) throw Napi::TypeError::New(env, "record.dir is required");
    r->seconds = optNum(cfg, "seconds", 0);
    r->quality = optInt(cfg, "quality", 90, 1, 100);
    // The image size each camera was calibrated at (record.sizes, one per source): a camera that
    // negotiated another size is refused before any file is created (ERR_SIZE_MISMATCH).
    if (cfg.Has("sizes") && cfg.Get("sizes").IsArray()) {
      const Napi::Array sz = cfg.Get("sizes").As<Napi::Array>();
      const int tol = optInt(cfg, "sizeTolerance", 16, 0, 1 << 20);
      std::string bad;
      for (uint32_t i = 0; i < sz.Length() && i < sources_.size(); i++) {
        if (!sz.Get(i).IsObject()) continue;
        const Napi::Object e = sz.Get(i).As<Napi::Object>();
        const int w = optInt(e, "width", 0, 0, 1 << 20), h = optInt(e, "height", 0, 0, 1 << 20);
        const Source& src = *sources_[i];
        if (w > 0 && h > 0 && (std::abs(src.width - w) > tol || std::abs(src.height - h) > tol))
          bad += (bad.empty() ? "" : "; ") + src.spec.name + " delivers " + std::to_string(src.width) + "×" + std::to_string(src.height) + " px but camera " +
                 optStr(e, "camera", src.spec.name) + " was calibrated at " + std::to_string(w) + "×" + std::to_string(h) + " px";
      }
      if (!bad.empty()) throw codedError(env, bad, "ERR_SIZE_MISMATCH");
    }
    for (auto& s : sources_) {
      auto w = std::make_unique<Writer>();
      w->video = r->dir + "/" + s->spec.name + ".avi";
      w->timestamps = r->dir + "/" + s->spec.name + ".timestamps.csv";
      try {
        w->mux.Open(w->video, s->width, s->height, fps_);
      } catch (const std::exception& e) {
        throw codedError(env, e.what(), "ERR_VIDEO_WRITE");
      }
      w->quality = r->quality;
      w->width = s->width;
      w->height = s->height;
      w->csv.open(w->timestamps);
      if (!w->csv) throw codedError(env, "cannot open " + w->timestamps + " for writing", "ERR_VIDEO_WRITE");
      w->csv << "frame,timestamp_us,slot_us,source_frame,status\n";
      r->writers.push_back(std::move(w));
    }
    for (auto& s : sources_) {
      std::lock_guard<std::mutex> lk(s->m);
      s->rq.q.clear();
      s->rq.closed = s->state != State::Running;
      s->recDropped = s->recDuplicated = s->recQueueDropped = 0;
      s->recording = true;
    }
    SizeRecordQueues();
    rec_ = std::move(r);
    Recording* rp = rec_.get();
    for (size_t i = 0; i < rp->writers.size(); i++) rp->writers[i]->th = std::thread([rp, i] { WriterLoop(*rp->writers[i]); });
    rp->sync = std::thread([this, rp] { SyncLoop(*rp); });
  }

  // One per camera, on its own thread: takes the synchroniser's frames in order and appends each
  // to the .avi — a passthrough frame's JPEG bytes unchanged, any other frame JPEG-encoded here —
  // then its sidecar row. A libav/OpenCV error stops writing (the queue is still drained so the
  // synchroniser never waits on a dead writer), sets `error` and `failed`; the synchroniser then
  // ends the recording ("write_failed"). The files keep every frame written before the error.
  static void WriterLoop(Writer& w) {
    std::vector<uchar> enc;
    // The last encoded frame's identity: a duplicated slot repeats the same source frame, so its
    // JPEG is written again instead of encoded again (a slow encoder would otherwise spend its time
    // on duplicates and never catch up with the timeline).
    int64_t encT = -2, encIndex = -2;
    for (;;) {
      Writer::Item it;
      {
        std::unique_lock<std::mutex> lk(w.m);
        w.cv.wait(lk, [&] { return !w.q.empty() || w.done; });
        if (w.q.empty()) break;
        it = std::move(w.q.front());
        w.q.pop_front();
        w.cv.notify_all();
      }
      if (w.failed.load()) continue;
      try {
        if (!it.f.jpeg.empty()) {
          w.mux.Write(it.f.jpeg.data, it.f.jpeg.total());
          w.passedThrough++;
        } else {
          const int64_t key = it.f.bgr.empty() ? -1 : it.f.t;
          if (key != encT || it.f.index != encIndex || enc.empty()) {
            encT = -2;
            cv::Mat bgr = it.f.bgr;
            if (bgr.empty()) bgr = cv::Mat::zeros(w.height, w.width, CV_8UC3);  // a camera with no frame yet
            if (bgr.cols != w.width || bgr.rows != w.height) {
              cv::Mat r;
              cv::resize(bgr, r, cv::Size(w.width, w.height));
              bgr = r;
            }
            if (!cv::imencode(".jpg", bgr, enc, {cv::IMWRITE_JPEG_QUALITY, w.quality})) throw std::runtime_error("JPEG encoding failed");
            encT = key;
            encIndex = it.f.index;
          }
          w.mux.Write(enc.data(), enc.size());
          w.encoded++;
        }
        w.csv << w.written.load() << ',' << it.f.t << ',' << it.slot << ',' << it.f.index << ',' << (it.dup ? "duplicated" : "captured") << '\n';
        // Flushed per row: the sidecar keeps a row for every frame that reached the .avi, and a
        // full disk shows up here (the stream's fail state) instead of being lost at close.
        w.csv.flush();
        if (!w.csv) throw std::runtime_error(w.timestamps + ": cannot write the sidecar (" + std::strerror(errno) + ")");
        ++w.written;
      } catch (const cv::Exception& e) {
        w.error = w.video + ": OpenCV " + e.func + ": " + e.err;
        w.failed.store(true);
      } catch (const std::exception& e) {
        w.error = e.what();
        w.failed.store(true);
      }
    }
    try {
      w.mux.Close();
    } catch (const std::exception& e) {
      if (!w.failed.load()) {
        w.error = e.what();
        w.failed.store(true);
      }
    }
    w.csv.flush();
    w.csv.close();
  }

  static void Enqueue(Writer& w, Writer::Item&& it) {
    std::unique_lock<std::mutex> lk(w.m);
    w.cv.wait(lk, [&] { return w.q.size() < 4; });  // the synchroniser waits; capture never does
    w.q.push_back(std::move(it));
    w.cv.notify_all();
  }

  // Groups frames onto slots c_k = c_0 + k·T (T = 1/fps); a frame belongs to slot k when
  // |t − c_k| < T/2. Slot k is decided once every camera has a frame at or past c_k + T/2, or has
  // closed. c_0 = the latest first frame among the cameras (before it not every camera ran).
  void SyncLoop(Recording& r) {
    const size_t N = sources_.size();
    const double T = 1e6 / fps_;
    std::vector<Frame> last(N);
    std::vector<bool> have(N, false);
    const int64_t maxSlots = r.seconds > 0 ? static_cast<int64_t>(std::llround(r.seconds * fps_)) : -1;
    std::string reason = "stopped";
    int failed = -1;
    double c0 = -1;
    int64_t k = 0;
    bool closedForStop = false;
    for (;;) {
      SizeRecordQueues();
      if (maxSlots >= 0 && k >= maxSlots) {
        reason = "seconds";
        break;
      }
      bool writeFailed = false;
      for (size_t i = 0; i < N && !writeFailed; i++)
        if (r.writers[i]->failed.load()) {
          writeFailed = true;
          reason = "write_failed";
          failed = static_cast<int>(i);
        }
      if (writeFailed) break;
      if (r.stopAsked.load() && !closedForStop) {
        // Stop: no new frames; what is queued still completes slots.
        closedForStop = true;
        for (auto& s : sources_) {
          std::lock_guard<std::mutex> g(s->m);
          s->recording = false;
          s->rq.closed = true;
          s->cv.notify_all();
        }
      }
      // Wait until the slot can be decided.
      bool decidable = false;
      {
        std::unique_lock<std::mutex> lk(syncM_);
        syncCv_.wait_for(lk, std::chrono::milliseconds(20), [&] { return Decidable(c0, k, T) || (r.stopAsked.load() && !closedForStop); });
        decidable = Decidable(c0, k, T);
      }
      if (!decidable) continue;
      if (c0 < 0) {
        // First slot: every camera's first frame.
        double latest = -1;
        bool all = true;
        for (size_t i = 0; i < N; i++) {
          std::lock_guard<std::mutex> g(sources_[i]->m);
          if (sources_[i]->rq.q.empty()) {
            all = false;
            if (failed < 0) failed = static_cast<int>(i);
          } else latest = std::max(latest, double(sources_[i]->rq.q.front().t));
        }
        if (!all) {
          reason = r.stopAsked.load() ? "stopped" : "source_ended";
          if (reason == "stopped") failed = -1;
          break;
        }
        c0 = latest;
        r.startUs = static_cast<int64_t>(c0);
      }
      const double c = c0 + k * T, lo = c - T / 2, hi = c + T / 2;
      std::vector<Frame> pick(N);
      std::vector<bool> got(N, false);
      bool end = false;
      // A camera whose queue is closed and empty ends the recording (after the slots it completed).
      for (size_t i = 0; i < N && !end; i++) {
        Source& s = *sources_[i];
        std::lock_guard<std::mutex> g(s.m);
        auto& q = s.rq.q;
        while (!q.empty() && q.front().t < lo) {  // surplus of an earlier slot (or before c_0)
          q.pop_front();
          s.recDropped++;
        }
        if (q.empty() && s.rq.closed) {
          end = true;
          if (!r.stopAsked.load() && s.state != State::Running) {
            reason = "source_ended";
            failed = static_cast<int>(i);
          }
        }
      }
      if (end) break;
      for (size_t i = 0; i < N; i++) {
        Source& s = *sources_[i];
        std::lock_guard<std::mutex> g(s.m);
        auto& q = s.rq.q;
        size_t best = SIZE_MAX;
        double bestD = 1e300;
        size_t inWin = 0;
        for (size_t j = 0; j < q.size() && q[j].t < hi; j++, inWin++) {
          const double d = std::abs(q[j].t - c);
          if (d < bestD) bestD = d, best = j;
        }
        if (best != SIZE_MAX) {
          pick[i] = q[best];
          got[i] = true;
          s.recDropped += static_cast<int64_t>(inWin) - 1;
          q.erase(q.begin(), q.begin() + inWin);
        }
        s.cv.notify_all();  // room in the queue for a waiting fast source
      }
      // A camera with no frame in this slot repeats its previous one (black before its first).
      for (size_t i = 0; i < N; i++) {
        Writer::Item it;
        it.slot = static_cast<int64_t>(std::llround(c));
        if (got[i]) {
          last[i] = pick[i];
          have[i] = true;
          it.f = pick[i];
          it.dup = false;
        } else {
          it.f = last[i];
          it.dup = true;
          std::lock_guard<std::mutex> g(sources_[i]->m);
          sources_[i]->recDuplicated++;
        }
        Enqueue(*r.writers[i], std::move(it));
      }
      k++;
      r.frames.store(k);
    }
    // Finish: stop feeding, drain the writers, close every file.
    for (auto& s : sources_) {
      std::lock_guard<std::mutex> g(s->m);
      s->recording = false;
      s->rq.closed = true;
      // frames still queued lie at or after the next slot: past the end of the recording, not dropped
      s->rq.q.clear();
      s->cv.notify_all();
    }
    for (auto& w : r.writers) {
      {
        std::lock_guard<std::mutex> g(w->m);
        w->done = true;
      }
      w->cv.notify_all();
      if (w->th.joinable()) w->th.join();
    }
    // A writer can also fail while draining (e.g. the disk filled up on the last frames).
    for (size_t i = 0; i < N && reason != "write_failed"; i++)
      if (r.writers[i]->failed.load()) {
        reason = "write_failed";
        failed = static_cast<int>(i);
      }
    if (reason == "write_failed") r.error = r.writers[failed]->error;
    r.reason = reason;
    r.failedCamera = reason == "source_ended" || reason == "write_failed" ? failed : -1;
    r.finished.store(true);
  }

  // Sizes each realtime camera's recording queue for the wait on the slowest camera. Slot k is
  // decided only once every camera has a frame past it, i.e. up to one frame interval of the slowest
  // camera (I_slow) after the slot ends; meanwhile a faster camera queues every frame it delivers
  // (only the slot being decided is pruned to one frame, Decidable). So a camera whose own interval
  // I_own is shorter than I_slow gets cap = max(recordQueueFrames, ⌈2·I_slow / I_own⌉ + 4): twice
  // the wait (jitter of the slow camera; its measured interval can lengthen, e.g. exposure in dim
  // light) plus 4 frames for the synchroniser's own latency (waking up, a writer queue of 4). A
  // camera no faster than the slowest (within 10 %) keeps recordQueueFrames (it waits on its own
  // frames only).
  // Intervals: the larger (slowest) or smaller (own) of the negotiated rate's and the one measured
  // over the last second (`recent`), so a camera delivering below its stated rate is seen as slow.
  // Memory is bounded apart from this count: past recordQueueFrames frames a queue grows only while
  // its frames total ≤ recordQueueBytes (default 256 MiB per camera: 40 decoded 1080p BGR frames of
  // 6.2 MB — a 60 fps camera next to a 4 fps one needs 34 —, or thousands of passthrough JPEGs);
  // DeliverLocked drops beyond it (counted in recQueueDropped), never the queue's front. `pace: fast` sources keep recordQueueFrames (they wait for
  // room instead of losing frames, and the pruning keeps them from blocking the slot).
  void SizeRecordQueues() {
    const size_t N = sources_.size();
    std::vector<double> own(N, 0);
    double slowest = 0;
    for (size_t i = 0; i < N; i++) {
      Source& s = *sources_[i];
      std::lock_guard<std::mutex> g(s.m);
      const double nominal = 1e6 / (s.fps > 0 ? s.fps : 30.0);
      const double measured = s.recent.size() >= 3 ? double(s.recent.back() - s.recent.front()) / double(s.recent.size() - 1) : nominal;
      own[i] = std::min(nominal, measured);
      if (!s.rq.closed) slowest = std::max(slowest, std::max(nominal, measured));
    }
    for (size_t i = 0; i < N; i++) {
      Source& s = *sources_[i];
      std::lock_guard<std::mutex> g(s.m);
      if (s.spec.fast) continue;
      size_t cap = s.rq.base;
      if (slowest > 1.1 * own[i]) {
        const double need = std::ceil(2.0 * slowest / own[i]) + 4;
        cap = std::max(cap, static_cast<size_t>(std::min(need, 100000.0)));
      }
      s.rq.cap = cap;
    }
  }

  // Slot k can be decided once every open camera has a frame at or past its end (c_k + T/2).
  // While waiting, each queue is pruned to what the decision can still use: frames before the slot
  // (surplus of an earlier one) are dropped, and of the frames inside the slot only the one nearest
  // its centre is kept, the rest dropped as they arrive — exactly what deciding the slot would do.
  // The slot being decided then holds at most one frame, so a source many times faster than the
  // timeline (a 240 fps clip next to a 25 fps one) never fills its queue inside one slot and blocks
  // (fast pace) or loses the frame past the slot (realtime) that the decision waits for.
  bool Decidable(double c0, int64_t k, double T) {
    const double c = c0 + k * T, lo = c - T / 2, hi = c + T / 2;
    bool all = true;
    for (auto& sp : sources_) {
      std::lock_guard<std::mutex> g(sp->m);
      auto& q = sp->rq.q;
      if (c0 >= 0 && !q.empty()) {
        const size_t before = q.size();
        while (!q.empty() && q.front().t < lo) {
          q.pop_front();
          sp->recDropped++;
        }
        size_t best = SIZE_MAX, n = 0;
        double bestD = 1e300;
        for (size_t j = 0; j < q.size() && q[j].t < hi; j++, n++) {
          const double d = std::abs(q[j].t - c);
          if (d < bestD) bestD = d, best = j;
        }
        if (n > 1) {
          Frame keep = q[best];
          q.erase(q.begin(), q.begin() + n);
          q.push_front(std::move(keep));
          sp->recDropped += static_cast<int64_t>(n) - 1;
        }
        if (q.size() != before) sp->cv.notify_all();  // room for a waiting fast source
      }
      if (sp->rq.closed) continue;
      if (q.empty() || (c0 >= 0 && q.back().t < hi)) all = false;
    }
    return all;
  }

  void FinishJoin() {
    if (!rec_) return;
    rec_->stopAsked.store(true);
    syncCv_.notify_all();
    if (rec_->sync.joinable()) rec_->sync.join();
  }

  void Shutdown() {
    if (closed_) return;
    closed_ = true;
    FinishJoin();
    {
      std::lock_guard<std::mutex> lk(stopM_);
      stop_.store(true);
    }
    stopCv_.notify_all();
    for (auto& s : sources_) {
      {
        std::lock_guard<std::mutex> g(s->m);
        s->cv.notify_all();
      }
      if (s->th.joinable()) s->th.join();
    }
  }

  // ------------------------------------------------------------ JS methods
  void requireOpen(Napi::Env env) {
    if (closed_) throw codedError(env, "the capture session is closed: open a new one", "ERR_CAPTURE_STATE");
  }
  Source& cam(const Napi::CallbackInfo& info) {
    if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(info.Env(), "camera must be a number");
    const int c = info[0].As<Napi::Number>().Int32Value();
    if (c < 0 || c >= static_cast<int>(sources_.size())) throw Napi::RangeError::New(info.Env(), "camera " + std::to_string(c) + " is not in this session (0.." + std::to_string(sources_.size() - 1) + ")");
    return *sources_[c];
  }

  Napi::Value Sources(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto arr = Napi::Array::New(env, sources_.size());
    for (size_t i = 0; i < sources_.size(); i++) {
      const Source& s = *sources_[i];
      auto o = Napi::Object::New(env);
      o.Set("index", static_cast<double>(i));
      o.Set("name", s.spec.name);
      o.Set("kind", s.spec.device ? "device" : "file");
      o.Set("source", s.spec.device ? (s.spec.path.empty() ? std::to_string(s.spec.deviceIndex) : s.spec.path) : s.spec.path);
      o.Set("width", s.width);
      o.Set("height", s.height);
      o.Set("fps", s.fps);
      o.Set("pixelFormat", s.pixelFormat);
      o.Set("backend", s.backend);
      o.Set("passthrough", s.passthrough.load());
      arr.Set(i, o);
    }
    return arr;
  }

  Napi::Value Fps(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), fps_); }

  Napi::Value Counts(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto arr = Napi::Array::New(env, sources_.size());
    for (size_t i = 0; i < sources_.size(); i++) {
      Source& s = *sources_[i];
      std::lock_guard<std::mutex> g(s.m);
      auto o = Napi::Object::New(env);
      o.Set("index", static_cast<double>(i));
      o.Set("name", s.spec.name);
      o.Set("state", stateName(s.state));
      o.Set("message", s.message);
      o.Set("captured", static_cast<double>(s.captured));
      o.Set("ringDropped", static_cast<double>(s.ringDropped));
      o.Set("lastTimestampUs", static_cast<double>(s.lastT));
      double mf = 0;
      if (s.recent.size() >= 2) mf = (s.recent.size() - 1) * 1e6 / double(s.recent.back() - s.recent.front());
      o.Set("measuredFps", mf);
      o.Set("written", static_cast<double>(rec_ ? rec_->writers[i]->written.load() : 0));
      o.Set("dropped", static_cast<double>(s.recDropped));
      o.Set("queueDropped", static_cast<double>(s.recQueueDropped));
      o.Set("recordQueueFrames", static_cast<double>(s.rq.cap));
      o.Set("duplicated", static_cast<double>(s.recDuplicated));
      o.Set("passthrough", s.passthrough.load());
      arr.Set(i, o);
    }
    return arr;
  }

  // The largest JPEG DCT reduction (1, 2, 4, 8) that still decodes at least maxWidth wide.
  static int reduceFor(const Source& s, int maxWidth) {
    if (maxWidth <= 0) return 1;
    int k = 1;
    while (k < 8 && s.width / (k * 2) >= maxWidth) k *= 2;
    return k;
  }

  static cv::Mat downscale(const cv::Mat& bgr, int maxWidth) {
    if (maxWidth <= 0 || bgr.cols <= maxWidth) return bgr;
    const int h = std::max(1, static_cast<int>(std::lround(double(bgr.rows) * maxWidth / bgr.cols)));
    cv::Mat out;
    cv::resize(bgr, out, cv::Size(maxWidth, h), 0, 0, cv::INTER_AREA);
    return out;
  }

  Napi::Value Read(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    requireOpen(env);
    Source& s = cam(info);
    const int maxWidth = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Int32Value() : 0;
    Frame f;
    {
      std::lock_guard<std::mutex> g(s.m);
      if (s.ring.empty()) return env.Null();
      f = std::move(s.ring.front());
      s.ring.pop_front();
    }
    cv::Mat rgb;
    cv::cvtColor(downscale(frameBgr(f, reduceFor(s, maxWidth)), maxWidth), rgb, cv::COLOR_BGR2RGB);
    auto o = Napi::Object::New(env);
    auto buf = Napi::Uint8Array::New(env, rgb.total() * rgb.elemSize());
    std::memcpy(buf.Data(), rgb.data, rgb.total() * rgb.elemSize());
    o.Set("data", buf);
    o.Set("width", rgb.cols);
    o.Set("height", rgb.rows);
    o.Set("channels", 3);
    o.Set("timestampUs", static_cast<double>(f.t));
    o.Set("frameIndex", static_cast<double>(f.index));
    return o;
  }

  Napi::Value LatestJpeg(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    requireOpen(env);
    Source& s = cam(info);
    const int maxWidth = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Int32Value() : 480;
    const int quality = info.Length() > 2 && info[2].IsNumber() ? std::clamp(info[2].As<Napi::Number>().Int32Value(), 1, 100) : 70;
    Frame f;
    {
      std::lock_guard<std::mutex> g(s.m);
      if (s.ring.empty()) return env.Null();
      f = std::move(s.ring.back());
      s.ringDropped += static_cast<int64_t>(s.ring.size()) - 1;  // older frames the consumer skipped
      s.ring.clear();
    }
    std::vector<uchar> jpg;
    int w = s.width, h = s.height;
    if (!f.jpeg.empty() && (maxWidth <= 0 || s.width <= maxWidth)) {
      jpg.assign(f.jpeg.data, f.jpeg.data + f.jpeg.total());  // the camera's own JPEG, not re-encoded
    } else {
      cv::Mat small = downscale(frameBgr(f, reduceFor(s, maxWidth)), maxWidth);
      cv::imencode(".jpg", small, jpg, {cv::IMWRITE_JPEG_QUALITY, quality});
      w = small.cols;
      h = small.rows;
    }
    auto o = Napi::Object::New(env);
    auto buf = Napi::Uint8Array::New(env, jpg.size());
    std::memcpy(buf.Data(), jpg.data(), jpg.size());
    o.Set("jpeg", buf);
    o.Set("width", w);
    o.Set("height", h);
    o.Set("timestampUs", static_cast<double>(f.t));
    o.Set("frameIndex", static_cast<double>(f.index));
    return o;
  }

  Napi::Value StartRecording(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    requireOpen(env);
    if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "startRecording({ dir, seconds? })");
    BeginRecording(env, info[0].As<Napi::Object>());
    return env.Undefined();
  }

  Napi::Value StopRecording(const Napi::CallbackInfo& info) {
    requireOpen(info.Env());
    if (rec_) {
      rec_->stopAsked.store(true);
      syncCv_.notify_all();
    }
    return info.Env().Undefined();
  }

  Napi::Value RecordingStatus(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto o = Napi::Object::New(env);
    const bool fin = rec_ && rec_->finished.load();
    if (fin && rec_->sync.joinable()) rec_->sync.join();
    o.Set("state", !rec_ ? "idle" : fin ? "finished" : "recording");
    o.Set("frames", static_cast<double>(rec_ ? rec_->frames.load() : 0));
    o.Set("fps", fps_);
    o.Set("reason", fin ? rec_->reason : "");
    o.Set("failedCamera", fin ? rec_->failedCamera : -1);
    o.Set("error", fin ? rec_->error : "");
    o.Set("startUs", static_cast<double>(rec_ ? rec_->startUs.load() : -1));
    auto cams = Napi::Array::New(env, sources_.size());
    for (size_t i = 0; i < sources_.size(); i++) {
      auto c = Napi::Object::New(env);
      if (rec_) {
        c.Set("video", rec_->writers[i]->video);
        c.Set("timestamps", rec_->writers[i]->timestamps);
        c.Set("written", static_cast<double>(rec_->writers[i]->written.load()));
        c.Set("passedThrough", static_cast<double>(rec_->writers[i]->passedThrough.load()));
        c.Set("encoded", static_cast<double>(rec_->writers[i]->encoded.load()));
      } else {
        c.Set("video", "");
        c.Set("timestamps", "");
        c.Set("written", 0);
        c.Set("passedThrough", 0);
        c.Set("encoded", 0);
      }
      std::lock_guard<std::mutex> g(sources_[i]->m);
      c.Set("dropped", static_cast<double>(sources_[i]->recDropped));
      c.Set("duplicated", static_cast<double>(sources_[i]->recDuplicated));
      cams.Set(i, c);
    }
    o.Set("cameras", cams);
    return o;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    if (opening_) throw codedError(info.Env(), "the sources are still opening: close after openAsync() settles", "ERR_CAPTURE_STATE");
    Shutdown();
    return info.Env().Undefined();
  }

  std::vector<std::unique_ptr<Source>> sources_;
  std::unique_ptr<Recording> rec_;
  Clock::time_point t0_;
  int64_t start_ = 0;
  size_t ringCap_ = 4;
  double fps_ = 30;
  napi_env env_ = nullptr;
  bool closed_ = false;
  bool deferred_ = false;  // created with deferOpen: sources open in openAsync()
  bool opening_ = false;   // openAsync() in flight (close() waits for it to settle)
  bool opened_ = false;    // capture threads started
  double requestedFps_ = 0;
  Napi::ObjectReference record_;  // deferOpen: the initial recording, begun once the sources are open
  std::atomic<bool> stop_{false};
  std::mutex stopM_, syncM_;
  std::condition_variable stopCv_, syncCv_;
};

// readPackets(path, maxFrames = 0) → Uint8Array[]: a video file's encoded frames as stored (FFmpeg
// demuxer in OpenCV's raw mode, CAP_PROP_FORMAT = -1): for an MJPEG .avi, each frame's JPEG bytes.
// For tests and tools that check passthrough recordings byte for byte. maxFrames 0: all.
Napi::Value ReadPackets(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "readPackets(path: string, maxFrames?: number)");
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  const int64_t max = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Int64Value() : 0;
  cv::VideoCapture cap;
  if (!cap.open(path, cv::CAP_FFMPEG)) throw codedError(env, "cannot open video " + path + " (missing, corrupt or unsupported)", "ERR_OPENCV");
  if (!cap.set(cv::CAP_PROP_FORMAT, -1)) throw codedError(env, "OpenCV's FFmpeg backend refused raw mode for " + path, "ERR_OPENCV");
  std::vector<cv::Mat> packets;
  cv::Mat m;
  while ((max <= 0 || static_cast<int64_t>(packets.size()) < max) && cap.read(m) && !m.empty()) packets.push_back(m.clone());
  auto arr = Napi::Array::New(env, packets.size());
  for (size_t i = 0; i < packets.size(); i++) {
    const size_t n = packets[i].total() * packets[i].elemSize();
    auto buf = Napi::Uint8Array::New(env, n);
    std::memcpy(buf.Data(), packets[i].data, n);
    arr.Set(i, buf);
  }
  return arr;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("readPackets", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Guarded(i.Env(), [&] { return ReadPackets(i); }); }));
  exports.Set("listDevices", Napi::Function::New(env, [](const Napi::CallbackInfo& i) { return Guarded(i.Env(), [&] { return ListDevices(i); }); }));
  exports.Set("CaptureSession", Session::Define(env));
  // Threads must stop before the process (or a worker's environment) goes: at a normal exit and a
  // worker's end, Node runs the environment's cleanup hooks; process.exit() does not, but exit()
  // runs atexit handlers before the statics of libraries loaded earlier are destroyed.
  napi_add_env_cleanup_hook(env, [](void* e) { Session::ShutdownAll(static_cast<napi_env>(e)); }, static_cast<napi_env>(env));
  static bool atexitSet = false;
  if (!atexitSet) {
    atexitSet = true;
    // OpenCV builds some statics on first use (imgcodecs' codec list): use them once now, so they
    // are destroyed after this handler, not before it while a writer still encodes (SIGSEGV).
    try {
      std::vector<uchar> jpg;
      cv::Mat tiny = cv::Mat::zeros(8, 8, CV_8UC3), half;
      cv::imencode(".jpg", tiny, jpg);
      cv::imdecode(jpg, cv::IMREAD_COLOR);
      cv::resize(tiny, half, cv::Size(4, 4));
    } catch (...) {
    }
    std::atexit([] { Session::ShutdownAll(nullptr); });
  }
  return exports;
}

}  // namespace

NODE_API_MODULE(capture, Init)
