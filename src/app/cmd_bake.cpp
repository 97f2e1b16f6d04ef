// `ibrr bake SCENE -o FILE`: precomputes a scene's diffuse global illumination by one of the methods of the
// table (methods.hpp; each method in its own file, method_NAME.cpp, with the flags it reads) that has a bake. This
// file registers the methods' flags, chooses the method, and refuses a flag the method does not read.
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "app/methods.hpp"
#include "cluster/cluster.hpp"
#include "lightmap/lightmap_file.hpp"
#include "util/error.hpp"

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace ibrr::app {
namespace {

// One `ibrr bake`: the scene, -o, --method, and every method of the table with a bake, each with its flags.
struct BakeCommand {
  std::string scene;
  std::string output;
  std::string method{defaultBakeMethod()};
  std::vector<const Method*> methods;
  std::vector<std::unique_ptr<BakeMethod>> bakes;  // methods[k]'s
  std::deque<MethodFlags> flags;                   // bakes[k]'s declared flags (stable: `declared` points in)
  std::vector<DeclaredFlags> declared;
  CommandFlags commandFlags;
};

// The methods of the table with a bake.
std::vector<const Method*> bakeMethods() {
  std::vector<const Method*> baked;
  for (const Method* method : methods())
    if (method->makeBake) baked.push_back(method);
  return baked;
}

std::size_t bakeMethodNamed(const BakeCommand& bake, const std::string& name) {
  std::vector<std::string_view> names;
  for (std::size_t k = 0; k < bake.methods.size(); ++k) {
    if (bake.methods[k]->name == name) return k;
    names.push_back(bake.methods[k]->name);
  }
  for (const Method* method : methods())
    if (method->name == name)
      throw CLI::ValidationError("--method '" + name + "' has nothing to bake (" + std::string(method->summary) +
                                 "): render it with 'ibrr render --method " + name + "'");
  throw CLI::ValidationError("--method '" + name + "': choose " + listOfNames(names));
}

// --method's help: every method of the table with what it makes.
std::string methodHelp() {
  std::vector<std::string> described;
  for (const Method* method : bakeMethods())
    described.push_back(std::string(method->name) + " (" + std::string(method->summary) + ")");
  return listOfNames(std::vector<std::string_view>(described.begin(), described.end()));
}

void runBake(const CLI::App& command, BakeCommand& bake) {
  const std::size_t chosen = bakeMethodNamed(bake, bake.method);
  const Method& method = *bake.methods[chosen];
  if (cluster::Cluster::world().distributed() && !method.distributed) {
    std::vector<std::string_view> distributed;
    for (const Method* other : bake.methods)
      if (other->distributed) distributed.push_back(other->name);
    throw Error("--method " + bake.method + " bakes in one process; under mpirun only --method " +
                listOfNames(distributed) + " is split over the ranks: start it without mpirun");
  }
  assignGivenFlags(command, bake.commandFlags, bake.declared, method.name);
  bake.bakes[chosen]->run(BakeRun{bake.scene, bake.output, bake.flags[chosen]});
}

}  // namespace

void addBakeCommand(CLI::App& app) {
  auto bake = std::make_shared<BakeCommand>();
  CLI::App* command = app.add_subcommand(
      "bake",
      "Bake global illumination: the IBRR store (VPL hemicubes warped into a layered depth cube) or a "
      "texel lightmap solved by hemicube gathering, progressive refinement, stochastic iteration or a "
      "form-factor matrix");
  addSceneArgument(*command, bake->scene);
  command
      ->add_option("-o,--output", bake->output,
                   "file to write: .ibrr store, or .lightmap for --method gather, progressive, stochastic or matrix")
      ->required();
  command->add_option("--method", bake->method, methodHelp())->capture_default_str();
  // Every method declares its own flags, bound to its own options; the command registers each flag once.
  for (const Method* method : bakeMethods()) {
    bake->methods.push_back(method);
    bake->bakes.push_back(method->makeBake());
    bake->bakes.back()->declareFlags(bake->flags.emplace_back());
    bake->declared.push_back({method->name, &bake->flags.back()});
  }
  registerMethodFlags(*command, bake->declared, bake->commandFlags);
  command->footer(
      "Examples:\n  ibrr bake cornell -o cornell.ibrr\n  ibrr bake cornell --paths 8192 --ldc 512 -o fine.ibrr\n"
      "  ibrr bake cornell --method gather -o cornell.lightmap\n"
      "  ibrr bake cornell --method gather --atlas 256 --hemicube 128 --tolerance 0.005 -o fine.lightmap\n"
      "  ibrr bake cornell --method progressive -o cornell.lightmap\n"
      "  ibrr bake cornell --method progressive --atlas 1024 --cluster 32 --emitter-cluster 4 -o fine.lightmap\n"
      "  ibrr bake cornell --method progressive --adaptive -o adaptive.lightmap\n"
      "  ibrr bake cornell --method stochastic -o cornell.lightmap\n"
      "  ibrr bake cornell --method stochastic --iterations 2000 --shooters 16 --seed 7 -o more.lightmap\n"
      "  ibrr bake cornell --method matrix --save-matrix cornell.ffmatrix -o cornell.lightmap\n"
      "  ibrr bake cornell --method matrix --storage compressed --reorder rows --bounces 12 -o c.lightmap\n"
      "Each flag's help names the methods that read it; a flag given to another method is refused.");
  command->callback([bake, command] { runBake(*command, *bake); });
}

}  // namespace ibrr::app
