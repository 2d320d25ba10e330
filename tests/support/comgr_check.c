/* Reads a code object back through ROCm's code object manager (comgr) and prints
 * what comgr sees, one fact per line, for tests/codeobj_comgr.rs to assert on.
 *
 * Build: cc -std=c11 -Wall -O1 -o comgr_check comgr_check.c -lamd_comgr
 * Usage: comgr_check FILE [--isa NAME]   (NAME: ISA for disassembly when comgr
 *        cannot name the object's ISA, i.e. v5/v6 objects with comgr 2.4)
 *
 * Output lines:
 *   isa: NAME | isa-error: STATUS
 *   target: ...  / version: MAJOR.MINOR
 *   kernel: .key=value ...        (scalar keys of each kernel map, comgr renders all as strings)
 *   arg: .key=value ...           (each argument map)
 *   symbol: NAME type=T size=N value=0xV undefined=U   (lookups of .name and .symbol)
 *   disasm: KERNEL: INSTRUCTION   (kernel code walked with amd_comgr_disassemble_instruction)
 * Exit status: 0 ok, 1 a comgr call failed, 2 usage or I/O.
 */
#define _POSIX_C_SOURCE 200809L
#include <amd_comgr.h>
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *file_bytes;
static size_t file_size;

#define CHECK(call)                                                                   \
  do {                                                                                \
    amd_comgr_status_t s_ = (call);                                                   \
    if (s_ != AMD_COMGR_STATUS_SUCCESS) {                                             \
      const char *m_ = "?";                                                           \
      amd_comgr_status_string(s_, &m_);                                               \
      fprintf(stdout, "comgr-error: %s: %s\n", #call, m_);                            \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

static char *meta_string(amd_comgr_metadata_node_t node) {
  amd_comgr_metadata_kind_t kind;
  CHECK(amd_comgr_get_metadata_kind(node, &kind));
  if (kind != AMD_COMGR_METADATA_KIND_STRING) {
    char *s = malloc(16);
    strcpy(s, kind == AMD_COMGR_METADATA_KIND_LIST ? "<list>" : kind == AMD_COMGR_METADATA_KIND_MAP ? "<map>" : "<null>");
    return s;
  }
  size_t size = 0;
  CHECK(amd_comgr_get_metadata_string(node, &size, NULL));
  char *s = malloc(size + 1);
  CHECK(amd_comgr_get_metadata_string(node, &size, s));
  s[size] = 0;
  return s;
}

static amd_comgr_status_t print_pair(amd_comgr_metadata_node_t key, amd_comgr_metadata_node_t value, void *user) {
  (void)user;
  amd_comgr_metadata_kind_t kind;
  CHECK(amd_comgr_get_metadata_kind(value, &kind));
  char *k = meta_string(key);
  if (kind == AMD_COMGR_METADATA_KIND_STRING) {
    char *v = meta_string(value);
    printf(" %s=%s", k, v);
    free(v);
  } else if (kind == AMD_COMGR_METADATA_KIND_LIST) {
    size_t n = 0;
    CHECK(amd_comgr_get_metadata_list_size(value, &n));
    printf(" %s=[%zu]", k, n);
  }
  free(k);
  return AMD_COMGR_STATUS_SUCCESS;
}

/* vaddr -> file offset through PT_LOAD headers. */
static int64_t vaddr_to_offset(uint64_t vaddr, uint64_t size) {
  if (file_size < sizeof(Elf64_Ehdr)) return -1;
  Elf64_Ehdr *eh = (Elf64_Ehdr *)file_bytes;
  for (int i = 0; i < eh->e_phnum; i++) {
    Elf64_Phdr *ph = (Elf64_Phdr *)(file_bytes + eh->e_phoff + (size_t)i * eh->e_phentsize);
    if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr && vaddr + size <= ph->p_vaddr + ph->p_filesz)
      return (int64_t)(ph->p_offset + (vaddr - ph->p_vaddr));
  }
  return -1;
}

static uint64_t read_memory(uint64_t from, char *to, uint64_t size, void *user) {
  (void)user;
  int64_t off = vaddr_to_offset(from, size);
  if (off < 0) return 0;
  memcpy(to, file_bytes + off, size);
  return size;
}

static const char *current_kernel;
static void print_instruction(const char *text, void *user) {
  (void)user;
  while (*text == ' ' || *text == '\t') text++;
  printf("disasm: %s: %s\n", current_kernel, text);
}
static void print_address(uint64_t address, void *user) {
  (void)user;
  (void)address;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: comgr_check FILE [--isa NAME]\n");
    return 2;
  }
  const char *isa_override = NULL;
  for (int i = 2; i + 1 < argc; i++)
    if (strcmp(argv[i], "--isa") == 0) isa_override = argv[i + 1];
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  file_size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  file_bytes = malloc(file_size);
  if (fread(file_bytes, 1, file_size, f) != file_size) {
    perror("read");
    return 2;
  }
  fclose(f);

  amd_comgr_data_t data;
  CHECK(amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &data));
  CHECK(amd_comgr_set_data(data, file_size, file_bytes));
  CHECK(amd_comgr_set_data_name(data, "object.hsaco"));

  char isa[256] = "";
  size_t isa_size = 0;
  amd_comgr_status_t st = amd_comgr_get_data_isa_name(data, &isa_size, NULL);
  if (st == AMD_COMGR_STATUS_SUCCESS && isa_size < sizeof isa) {
    CHECK(amd_comgr_get_data_isa_name(data, &isa_size, isa));
    printf("isa: %s\n", isa);
  } else {
    const char *m = "?";
    amd_comgr_status_string(st, &m);
    printf("isa-error: %s\n", m);
  }
  if (isa_override) snprintf(isa, sizeof isa, "%s", isa_override);

  amd_comgr_metadata_node_t md, node;
  CHECK(amd_comgr_get_data_metadata(data, &md));
  CHECK(amd_comgr_metadata_lookup(md, "amdhsa.target", &node));
  char *s = meta_string(node);
  printf("target: %s\n", s);
  free(s);
  CHECK(amd_comgr_metadata_lookup(md, "amdhsa.version", &node));
  amd_comgr_metadata_node_t v0, v1;
  CHECK(amd_comgr_index_list_metadata(node, 0, &v0));
  CHECK(amd_comgr_index_list_metadata(node, 1, &v1));
  char *a = meta_string(v0), *b = meta_string(v1);
  printf("version: %s.%s\n", a, b);
  free(a);
  free(b);

  amd_comgr_metadata_node_t kernels;
  CHECK(amd_comgr_metadata_lookup(md, "amdhsa.kernels", &kernels));
  size_t nk = 0;
  CHECK(amd_comgr_get_metadata_list_size(kernels, &nk));
  for (size_t k = 0; k < nk; k++) {
    amd_comgr_metadata_node_t kernel, args, name_node, sym_node;
    CHECK(amd_comgr_index_list_metadata(kernels, k, &kernel));
    printf("kernel:");
    CHECK(amd_comgr_iterate_map_metadata(kernel, print_pair, NULL));
    printf("\n");
    if (amd_comgr_metadata_lookup(kernel, ".args", &args) == AMD_COMGR_STATUS_SUCCESS) {
      size_t na = 0;
      CHECK(amd_comgr_get_metadata_list_size(args, &na));
      for (size_t i = 0; i < na; i++) {
        amd_comgr_metadata_node_t arg;
        CHECK(amd_comgr_index_list_metadata(args, i, &arg));
        printf("arg:");
        CHECK(amd_comgr_iterate_map_metadata(arg, print_pair, NULL));
        printf("\n");
      }
    }
    CHECK(amd_comgr_metadata_lookup(kernel, ".name", &name_node));
    CHECK(amd_comgr_metadata_lookup(kernel, ".symbol", &sym_node));
    char *names[2] = {meta_string(name_node), meta_string(sym_node)};
    uint64_t kernel_value = 0, kernel_size = 0;
    for (int j = 0; j < 2; j++) {
      amd_comgr_symbol_t sym;
      CHECK(amd_comgr_symbol_lookup(data, names[j], &sym));
      amd_comgr_symbol_type_t type;
      uint64_t size = 0, value = 0;
      bool undefined = false;
      CHECK(amd_comgr_symbol_get_info(sym, AMD_COMGR_SYMBOL_INFO_TYPE, &type));
      CHECK(amd_comgr_symbol_get_info(sym, AMD_COMGR_SYMBOL_INFO_SIZE, &size));
      CHECK(amd_comgr_symbol_get_info(sym, AMD_COMGR_SYMBOL_INFO_VALUE, &value));
      CHECK(amd_comgr_symbol_get_info(sym, AMD_COMGR_SYMBOL_INFO_IS_UNDEFINED, &undefined));
      printf("symbol: %s type=%d size=%llu value=0x%llx undefined=%d\n", names[j], (int)type,
             (unsigned long long)size, (unsigned long long)value, (int)undefined);
      if (j == 0) {
        kernel_value = value;
        kernel_size = size;
      }
    }
    if (isa[0]) {
      amd_comgr_disassembly_info_t info;
      CHECK(amd_comgr_create_disassembly_info(isa, read_memory, print_instruction, print_address, &info));
      current_kernel = names[0];
      uint64_t pc = kernel_value;
      while (pc < kernel_value + kernel_size) {
        uint64_t size = 0;
        CHECK(amd_comgr_disassemble_instruction(info, pc, NULL, &size));
        if (size == 0) break;
        pc += size;
      }
      CHECK(amd_comgr_destroy_disassembly_info(info));
    }
    free(names[0]);
    free(names[1]);
  }
  CHECK(amd_comgr_destroy_metadata(md));
  CHECK(amd_comgr_release_data(data));
  return 0;
}
