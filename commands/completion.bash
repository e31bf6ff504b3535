# drm completion for bash: eval "$(drm completion bash)" or add its output to ~/.bashrc
_drm() {
  local cur="${COMP_WORDS[COMP_CWORD]}" path="" words="" w i
  # The command path typed so far: words that extend a known path (flags and their values do not).
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    [[ $w == -* ]] && continue
    case "${path:+$path }$w" in
      @PATHS@) path="${path:+$path }$w" ;;
    esac
  done
  case "$path" in
@CASES@
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _drm drm
