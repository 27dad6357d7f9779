// Lucene 8 peer for bench/relevance.ts (compiled with javac against Debian's liblucene8-java at
// bench time). Reads documents as TSV (url, title, headings, content) and queries one per line;
// prints, per query, the top 10 URLs separated by tabs. Analyzer by language: GermanAnalyzer,
// FrenchAnalyzer, JapaneseAnalyzer (kuromoji), CJKAnalyzer (bigrams), EnglishAnalyzer otherwise.
// Fields title, headings, content boosted 4, 2, 1 through MultiFieldQueryParser (OR).
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.cjk.CJKAnalyzer;
import org.apache.lucene.analysis.de.GermanAnalyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.fr.FrenchAnalyzer;
import org.apache.lucene.analysis.ja.JapaneseAnalyzer;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.queryparser.classic.MultiFieldQueryParser;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.*;
import org.apache.lucene.store.ByteBuffersDirectory;

public class LucenePeer {
  static Analyzer analyzer(String name) {
    switch (name) {
      case "german": return new GermanAnalyzer();
      case "french": return new FrenchAnalyzer();
      case "japanese": return new JapaneseAnalyzer();
      case "cjk": return new CJKAnalyzer();
      default: return new EnglishAnalyzer();
    }
  }

  public static void main(String[] args) throws Exception {
    Analyzer a = analyzer(args[0]);
    ByteBuffersDirectory dir = new ByteBuffersDirectory();
    try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig(a))) {
      for (String line : Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8)) {
        String[] f = line.split("\t", -1);
        Document d = new Document();
        d.add(new StringField("url", f[0], Field.Store.YES));
        d.add(new TextField("title", f[1], Field.Store.NO));
        d.add(new TextField("headings", f[2], Field.Store.NO));
        d.add(new TextField("content", f[3], Field.Store.NO));
        w.addDocument(d);
      }
    }
    IndexSearcher s = new IndexSearcher(DirectoryReader.open(dir));
    Map<String, Float> boosts = new HashMap<>();
    boosts.put("title", 4f);
    boosts.put("headings", 2f);
    boosts.put("content", 1f);
    MultiFieldQueryParser qp = new MultiFieldQueryParser(new String[] {"title", "headings", "content"}, a, boosts);
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
    for (String q : Files.readAllLines(Paths.get(args[2]), StandardCharsets.UTF_8)) {
      StringBuilder sb = new StringBuilder();
      try {
        Query query = qp.parse(QueryParser.escape(q));
        for (ScoreDoc sd : s.search(query, 10).scoreDocs) {
          if (sb.length() > 0) sb.append('\t');
          sb.append(s.doc(sd.doc).get("url"));
        }
      } catch (Exception e) {
        // An unparsable or empty query answers nothing.
      }
      out.println(sb);
    }
    out.flush();
  }
}
