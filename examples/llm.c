/* llm: asks a language model a question and keeps the answer, validators judging it with the
 * equivalence principle (EqComparative).
 *   deploy: {}
 *   {"": "ask", "args": [question]}   a write: the leader's non-deterministic block asks the LLM
 *                                     module (ExecPrompt, text); each validator asks the same
 *                                     question itself and has the module compare the two answers
 *                                     (ExecPromptTemplate EqComparative); the answer is stored
 *                                     and returned
 *   {"": "answer"}                    a view: the last answer ("" before the first)
 *   {"": "question"}                  a view: the question it answers
 *   {"": "count"}                     a view: how many answers were stored
 * A module that refuses (a prompt too large, ...) ends `ask` with a UserError that says why;
 * outside a node with an LLM module every `ask` is a UserError "ExecPrompt refused (6 forbidden...)".
 */
#include <stdlib.h>
#include <string.h>

#include "genlayer.h"

/* Storage, in this contract's slot: count u64 at 0, the answer (bytes) at 8, the question at 12. */
enum { kCount = 0, kAnswer = 8, kQuestion = 12 };
static const char kPrinciple[] = "The two answers give the same information; wording may differ.";

/* A block's data (the question) as a C string. */
static char* question_of(const uint8_t* data, size_t len) {
  char* q = malloc(len + 1);
  if (!q) gl_user_error("out of memory");
  memcpy(q, data, len);
  q[len] = 0;
  return q;
}

static void ask_leader(const uint8_t* data, size_t len) {
  gl_module_answer a;
  if (gl_exec_prompt(question_of(data, len), "text", &a) != GL_SUCCESS) gl_user_error(a.error);
  size_t n = 0;
  const char* text = gl_answer_str(&a, &n);
  if (!text) gl_user_error("the model's answer is not text");
  gl_buf out = {0};
  gl_enc_str(&out, text, n);
  gl_return(&out);
}

/* The validator's own answer, and the module's verdict on the two. The leader's block failing
 * (its module refused) is agreed to only when the validator's own prompt is refused too. */
static int ask_validator(const uint8_t* data, size_t len, const uint8_t* leader, size_t leader_len) {
  gl_module_answer mine;
  int e = gl_exec_prompt(question_of(data, len), "text", &mine);
  if (leader_len < 1 || leader[0] != 0) return e != GL_SUCCESS;
  if (e != GL_SUCCESS) return 0;
  gl_reader r;
  gl_item it;
  gl_reader_init(&r, leader + 1, leader_len - 1);
  if (gl_next(&r, &it) || it.kind != GL_K_STR) return 0;
  size_t mine_len = 0;
  const char* mine_text = gl_answer_str(&mine, &mine_len);
  if (!mine_text) return 0;
  char* leader_answer = question_of(it.data, (size_t)it.n);
  char* validator_answer = question_of((const uint8_t*)mine_text, mine_len);
  gl_prompt_template t = {
      .kind = GL_EQ_COMPARATIVE, .leader_answer = leader_answer, .validator_answer = validator_answer,
      .principle = kPrinciple};
  gl_module_answer verdict;
  int same = 0;
  if (gl_exec_prompt_template(&t, &verdict) != GL_SUCCESS || gl_answer_bool(&verdict, &same) != GL_SUCCESS) return 0;
  /* Byte-identical answers are equivalent whatever the model says of them (a small model may
   * say no); any other pair is the model's call. */
  return same || (it.n == mine_len && memcmp(it.data, mine_text, mine_len) == 0);
}

static const gl_nondet_block blocks[] = {{ask_leader, ask_validator}};

static void return_stored_text(const gl_slot* s, uint32_t offset) {
  gl_buf text = {0};
  if (gl_storage_read_bytes(s, offset, &text) != GL_SUCCESS) gl_user_error("storage read refused");
  gl_buf out = {0};
  gl_enc_str(&out, (const char*)text.data, text.len);
  gl_return(&out);
}

static void run(const gl_message* m) {
  gl_slot s;
  gl_contract_slot(&s);
  if (m->is_init) gl_return(NULL); /* storage starts zeroed: no answer yet */
  if (gl_method_is(m, "answer")) return_stored_text(&s, kAnswer);
  if (gl_method_is(m, "question")) return_stored_text(&s, kQuestion);
  if (gl_method_is(m, "count")) {
    gl_buf out = {0};
    gl_enc_u64(&out, gl_storage_read_u64(&s, kCount));
    gl_return(&out);
  }
  if (gl_method_is(m, "ask")) {
    gl_args a;
    gl_args_open(m, 1, 1, &a);
    size_t n = 0;
    const char* question = gl_arg_str(&a, &n);
    gl_args_check(&a);
    if (n == 0 || n > 4096) gl_user_error("a question has 1 to 4096 bytes");
    gl_buf res = {0};
    if (gl_run_nondet(0, question, n, &res) != GL_SUCCESS) gl_user_error("RunNondet refused");
    if (res.len < 1) gl_user_error("the block gave no result");
    if (res.data[0] != 0) {
      /* The leader's block ended with a UserError (the module's refusal): pass its message on. */
      gl_reader r;
      gl_item it;
      gl_reader_init(&r, res.data + 1, res.len - 1);
      if (res.data[0] == 1 && gl_next(&r, &it) == 0 && it.kind == GL_K_STR) {
        gl_user_error(question_of(it.data, (size_t)it.n));
      }
      gl_user_error("the LLM block failed");
    }
    gl_reader r;
    gl_item it;
    gl_reader_init(&r, res.data + 1, res.len - 1);
    if (gl_next(&r, &it) || it.kind != GL_K_STR || it.n > UINT32_MAX) gl_user_error("the block's answer is not text");
    if (gl_storage_write_bytes(&s, kAnswer, it.data, (uint32_t)it.n) != GL_SUCCESS ||
        gl_storage_write_bytes(&s, kQuestion, question, (uint32_t)n) != GL_SUCCESS ||
        gl_storage_write_u64(&s, kCount, gl_storage_read_u64(&s, kCount) + 1) != GL_SUCCESS) {
      gl_user_error("storage write refused");
    }
    gl_buf out = {0};
    gl_enc_str(&out, (const char*)it.data, (size_t)it.n);
    gl_return(&out);
  }
  gl_user_error("unknown method");
}

GL_CONTRACT_WITH_NONDET(run, blocks)
