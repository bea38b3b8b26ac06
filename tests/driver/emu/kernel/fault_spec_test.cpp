// ORK_EMU_FAULTS's grammar (driver/emu/kernel/fault_spec.h): what each rule parses to, the
// strict errors, and the rules firing on the fake kernel's events.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>

#include "driver/emu/kernel/fake_kernel.h"
#include "driver/emu/kernel/fault_spec.h"
#include "uapi/rocket_accel.h"

namespace ork::emu {
namespace {

TEST(FaultSpec, RulesParseToPointWhatSkipAndCount) {
  auto r = parse_fault_spec(" submit:eio@3 , ioctl:eintr x40,job:wedge x*,device:gone@7,mmap:enomem@2x3,open:eacces x*");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 6u);
  const auto& v = *r;
  EXPECT_EQ(v[0].point, FaultPoint::submit);
  EXPECT_EQ(v[0].err, EIO);
  EXPECT_EQ(v[0].skip, 2);
  EXPECT_EQ(v[0].count, 1);
  EXPECT_EQ(v[0].text, "submit:eio@3");
  EXPECT_EQ(v[1].point, FaultPoint::ioctl);
  EXPECT_EQ(v[1].err, EINTR);
  EXPECT_EQ(v[1].skip, 0);
  EXPECT_EQ(v[1].count, 40);
  EXPECT_EQ(v[2].point, FaultPoint::job);
  EXPECT_EQ(v[2].job, JobFault::wedge);
  EXPECT_EQ(v[2].count, -1);
  EXPECT_EQ(v[3].point, FaultPoint::device);
  EXPECT_TRUE(v[3].gone);
  EXPECT_EQ(v[3].skip, 6);
  EXPECT_EQ(v[4].point, FaultPoint::mmap);
  EXPECT_EQ(v[4].err, ENOMEM);
  EXPECT_EQ(v[4].skip, 1);
  EXPECT_EQ(v[4].count, 3);
  EXPECT_EQ(v[5].point, FaultPoint::open);
  EXPECT_EQ(v[5].err, EACCES);
  EXPECT_EQ(v[5].count, -1);
  EXPECT_TRUE(parse_fault_spec("").ok());
  EXPECT_TRUE(parse_fault_spec("").value().empty());
}

TEST(FaultSpec, BadRulesNameTheRuleAndWhatIsAccepted) {
  struct Case {
    const char* spec;
    const char* says;
  };
  for (const Case& c : {Case{"submit", "expected POINT:WHAT"},
                        Case{"sbumit:eio", "unknown point 'sbumit' (points: ioctl submit"},
                        Case{"submit:eoops", "unknown errno 'eoops' (errnos: eintr"},
                        Case{"job:melt", "unknown job fault 'melt' (job faults: wedge dma stray)"},
                        Case{"device:lost", "unknown device fault 'lost'"},
                        Case{"device:gone x2", "takes no count"},
                        Case{"submit:eio@0", "'@0': expected a whole number from 1"},
                        Case{"submit:eio@-2", "'@-2': expected a whole number"},
                        Case{"submit:eio@3x0", "'x0': expected a whole number"},
                        Case{"submit:eio@99999999999", "expected a whole number"},
                        Case{"submit:eio,", "fault rule '': expected POINT:WHAT"}}) {
    auto r = parse_fault_spec(c.spec);
    ASSERT_FALSE(r.ok()) << c.spec;
    EXPECT_EQ(r.error().code, -EINVAL);
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << c.spec << ": " << r.error().message;
  }
}

TEST(FaultSpec, EnvironmentErrorNamesTheVariable) {
  ::setenv("ORK_EMU_FAULTS", "submit:eio@x", 1);
  auto r = faults_from_env();
  ::unsetenv("ORK_EMU_FAULTS");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("ORK_EMU_FAULTS: fault rule 'submit:eio@x'", 0), 0u) << r.error().message;
  EXPECT_TRUE(faults_from_env().ok());
  EXPECT_TRUE(faults_from_env()->empty());
}

TEST(FaultSpec, RulesFireOnTheChosenEventsOnly) {
  FakeKernel k;
  k.faults().rules = *parse_fault_spec("ioctl:eio@2x2,mmap:enomem");
  int fd = k.open("/dev/accel/accel0", O_RDWR);
  ASSERT_GE(fd, 0);
  int rc = 0;  // what the last create's ioctl returned (the Os convention: 0 or -errno)
  auto create = [&] {
    drm_rocket_create_bo bo{.size = 4096};
    rc = k.ioctl(fd, DRM_IOCTL_ROCKET_CREATE_BO, &bo);
    return rc == 0 ? bo : drm_rocket_create_bo{};
  };
  EXPECT_NE(create().handle, 0u);  // 1st: let through
  EXPECT_EQ(create().handle, 0u);  // 2nd and 3rd fail
  EXPECT_EQ(rc, -EIO);
  EXPECT_EQ(create().handle, 0u);
  const drm_rocket_create_bo bo = create();  // spent
  EXPECT_NE(bo.handle, 0u);
  EXPECT_EQ(k.faults().rules[0].count, 0);
  // mmap has its own rule: the first mmap fails, the second maps.
  int err = 0;
  EXPECT_EQ(k.mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(bo.offset), &err), nullptr);
  EXPECT_EQ(err, -ENOMEM);
  void* p = k.mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(bo.offset), &err);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(k.munmap(p, 4096), 0);
  k.faults().rules = *parse_fault_spec("device:gone");
  EXPECT_EQ(create().handle, 0u);
  EXPECT_EQ(rc, -ENODEV);
  EXPECT_TRUE(k.faults().gone);
  EXPECT_EQ(create().handle, 0u);
  EXPECT_EQ(rc, -ENODEV);
  EXPECT_EQ(k.mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(bo.offset), &err), nullptr);
  EXPECT_EQ(err, -ENODEV);
  EXPECT_EQ(k.open("/dev/accel/accel0", O_RDWR), -ENOENT);
  EXPECT_EQ(k.close(fd), 0);  // close still works
}

// open:ERRNO fails opens of a node that exists (a board's node without the video group);
// ioctl rules, which count every call on an open file, never fail an open.
TEST(FaultSpec, OpenRulesFailOpensAndOnlyOpens) {
  FakeKernel k;
  k.faults().rules = *parse_fault_spec("ioctl:eio x3,open:eacces@2");
  int first = k.open("/dev/dri/card1", O_RDWR);
  ASSERT_GE(first, 0);
  EXPECT_EQ(k.open("/dev/dri/card1", O_RDWR), -EACCES);
  int third = k.open("/dev/dri/renderD129", O_RDWR);
  ASSERT_GE(third, 0);
  EXPECT_EQ(k.faults().rules[0].count, 3);  // the opens were not ioctl events
  EXPECT_EQ(k.faults().rules[1].count, 0);
  EXPECT_EQ(k.close(first), 0);
  EXPECT_EQ(k.close(third), 0);
}

}  // namespace
}  // namespace ork::emu
