// The image check before a container job starts (jobs/image_store.h),
// against a stand-in podman script: present, absent, a check that fails
// (exit 1 with an error, as rootless podman does when it cannot enter its
// user namespace) and, as root, that it runs as the job user with the
// user's HOME. The Slurm executor's submission check refuses only an image
// that is definitely absent.
#include "jobs/image_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace cairn::jobs {
namespace {

using ::testing::HasSubstr;

class ImageStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Root runs the check as an unprivileged user, as cairnd does.
    if (geteuid() == 0) {
      absl::StatusOr<JobUser> nobody = ResolveJobUser("nobody", false);
      ASSERT_TRUE(nobody.ok()) << nobody.status();
      user_ = *nobody;
    } else {
      user_ = CurrentUser();
    }
    ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
    podman_ = dir_.path() + "/podman";
    const std::string home = user_.home.empty() ? "/" : user_.home;
    std::ofstream(podman_) << absl::StrCat(
        "#!/bin/sh\n"
        "[ \"$1 $2\" = 'image exists' ] || exit 125\n"
        "case \"$3\" in\n"
        "  localhost/present:1)\n"
        "    [ \"$(id -u)\" = ",
        user_.uid, " ] && [ \"$HOME\" = '", home,
        "' ] && exit 0\n"
        "    echo \"Error: run as $(id -u) with HOME $HOME\" >&2; exit 125;;\n"
        "  localhost/absent:1) echo 'level=warning msg=\"not shared\"' >&2;"
        " exit 1;;\n"
        "  *) echo 'level=error msg=\"cannot set up namespace\"' >&2; exit "
        "1;;\n"
        "esac\n");
    ASSERT_EQ(chmod(podman_.c_str(), 0755), 0);
  }

  absl::StatusOr<bool> InStore(const std::string& image) {
    const std::string home = user_.home.empty() ? "/" : user_.home;
    return ImageInStore(podman_, image, {"PATH=/usr/bin:/bin", "HOME=" + home},
                        user_);
  }

  testing::TempDir dir_;
  JobUser user_;
  std::string podman_;
};

TEST_F(ImageStoreTest, PresentAbsentAndAFailedCheckAreToldApart) {
  absl::StatusOr<bool> present = InStore("localhost/present:1");
  ASSERT_TRUE(present.ok()) << present.status();
  EXPECT_TRUE(*present);
  absl::StatusOr<bool> absent = InStore("localhost/absent:1");
  ASSERT_TRUE(absent.ok()) << absent.status();
  EXPECT_FALSE(*absent);
  // Exit 1 with an error on stderr is a failed check, not a missing image.
  absl::StatusOr<bool> broken = InStore("localhost/broken:1");
  EXPECT_TRUE(absl::IsFailedPrecondition(broken.status())) << broken.status();
  EXPECT_THAT(broken.status().message(), HasSubstr("cannot set up namespace"));
  absl::StatusOr<bool> bad = InStore("Not An Image!");
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
}

TEST_F(ImageStoreTest, SlurmSubmissionRefusesOnlyAMissingImage) {
  EXPECT_TRUE(CheckJobUserImage(podman_, "localhost/present:1", user_).ok());
  const absl::Status absent =
      CheckJobUserImage(podman_, "localhost/absent:1", user_);
  EXPECT_TRUE(absl::IsFailedPrecondition(absent)) << absent;
  EXPECT_THAT(absent.message(), HasSubstr("'localhost/absent:1'"));
  EXPECT_THAT(absent.message(), HasSubstr("'" + user_.name + "'"));
  EXPECT_LT(absent.message().size(), 1024u);
  // The node decides when this host cannot tell.
  EXPECT_TRUE(CheckJobUserImage(podman_, "localhost/broken:1", user_).ok());
  EXPECT_TRUE(
      CheckJobUserImage("no-such-runtime-here", "localhost/absent:1", user_)
          .ok());
  EXPECT_TRUE(absl::IsInvalidArgument(
      CheckJobUserImage(podman_, "Not An Image!", user_)));
}

}  // namespace
}  // namespace cairn::jobs
