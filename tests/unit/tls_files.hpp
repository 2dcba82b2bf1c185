// Test helper: a throw-away PKI made with the `openssl` command in a temporary directory: a CA,
// a server certificate it signed for IP:127.0.0.1 and DNS:localhost, one for another name, and a
// key that belongs to neither. Removed with the object.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace mcpclass::test {

class TlsFiles {
 public:
  TlsFiles() {
    std::string pattern = (std::filesystem::temp_directory_path() / "mcpclass-tls-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir_ = pattern;
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    openssl("req -x509" + ec + " -keyout " + path("ca.key") + " -out " + path("ca.pem") +
            " -days 2 -subj /CN=mcpclass-test-ca" + " -addext basicConstraints=critical,CA:TRUE" +
            " -addext keyUsage=critical,keyCertSign,cRLSign");
    sign("server", "subjectAltName=IP:127.0.0.1,DNS:localhost");
    sign("wrong-name", "subjectAltName=DNS:wrong-name.example");
    openssl("genpkey -algorithm ec -pkeyopt ec_paramgen_curve:prime256v1 -out " +
            path("stray.key"));
  }
  ~TlsFiles() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  TlsFiles(const TlsFiles&) = delete;
  TlsFiles& operator=(const TlsFiles&) = delete;

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string ca() const { return path("ca.pem"); }
  std::string cert() const { return path("server.pem"); }
  std::string key() const { return path("server.key"); }

 private:
  void openssl(const std::string& args) const {
    const std::string command = "openssl " + args + " >>" + path("openssl.log") + " 2>&1";
    INFO(command);
    REQUIRE(std::system(command.c_str()) == 0);
  }

  // <name>.pem and <name>.key, signed by the CA, for the given subjectAltName.
  void sign(const std::string& name, const std::string& san) const {
    std::ofstream(path(name + ".ext")) << san << "\nbasicConstraints=CA:FALSE\n"
                                       << "extendedKeyUsage=serverAuth\n";
    openssl("req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " +
            path(name + ".key") + " -out " + path(name + ".csr") + " -subj /CN=" + name);
    openssl("x509 -req -in " + path(name + ".csr") + " -CA " + ca() + " -CAkey " + path("ca.key") +
            " -CAcreateserial -days 2 -out " + path(name + ".pem") + " -extfile " +
            path(name + ".ext"));
  }

  std::filesystem::path dir_;
};

}  // namespace mcpclass::test
